// A second process for Trellis's persistence and isolation tests.
//   TrellisProcessHelper write PATH N   adds N ProcessDog objects in one transaction
//   TrellisProcessHelper count PATH     prints the number of ProcessDog objects
import Foundation
import Trellis

class ProcessDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: TrellisProcessHelper write|count PATH [N]\n".utf8))
    exit(2)
}
do {
    let realm = try Realm(configuration: .init(fileURL: URL(fileURLWithPath: arguments[2]), objectTypes: [ProcessDog.self]))
    switch arguments[1] {
    case "write":
        let count = Int(arguments.count > 3 ? arguments[3] : "1") ?? 1
        try realm.write {
            for i in 0..<count { realm.add(ProcessDog(value: ["name": "helper \(i)", "age": i])) }
        }
        print("wrote \(count)")
    case "count":
        print(realm.objects(ProcessDog.self).count)
    default:
        FileHandle.standardError.write(Data("unknown command \(arguments[1])\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
