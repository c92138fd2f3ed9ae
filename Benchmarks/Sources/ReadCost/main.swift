// Run: cd Benchmarks && swift run -c release ReadCost
import Foundation
import Trellis
final class Dog: Object { @Persisted var name = ""; @Persisted var age = 0; @Persisted(originProperty: "dog") var owners: LinkingObjects<Person> }
final class Person: Object { @Persisted var name = ""; @Persisted var dog: Dog?; @Persisted var dogs: List<Dog> }
let url = URL(fileURLWithPath: NSTemporaryDirectory() + "readbench-\(getpid()).realm")
var config = Realm.Configuration(fileURL: url, objectTypes: [Dog.self, Person.self])
config.maximumFileSize = 1 << 30
let realm = try Realm(configuration: config)
let n = Int(ProcessInfo.processInfo.environment["N"] ?? "") ?? 100_000
try realm.write { for i in 0..<n { let p = Person(); p.name = "p\(i)"; let d = Dog(); d.age = i % 20; p.dog = d; realm.add(p) } }
// 1,000 people with 10 dogs each in a List (W3's shape, smaller).
let listOwners = (0..<1_000).map { _ in Person() }
try realm.write { for p in listOwners { realm.add(p); p.dogs.append(objectsIn: dogsForLists()) } }
func dogsForLists() -> [Dog] { (0..<10).map { i in let d = Dog(); d.age = i; return d } }
let dogs = Array(realm.objects(Dog.self)); let people = Array(realm.objects(Person.self)).filter { $0.dog != nil }
let only = ProcessInfo.processInfo.environment["ONLY"]
func time(_ label: String, _ reps: Int, _ body: () -> Int) {
  if let only, !label.hasPrefix(only) { return }
  let start = DispatchTime.now().uptimeNanoseconds; var sum = 0
  let rounds = Int(ProcessInfo.processInfo.environment["ROUNDS"] ?? "") ?? 3
  for _ in 0..<rounds { sum &+= body() }
  let ns = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(rounds * reps)
  print(String(format: "%@: %.1f ns per call (checksum %d)", label, ns, sum))
}
// Same accessor read repeatedly: row pointer cached per snapshot, so this is the decode cost.
time("repeated read of one object's age", n) { var s = 0; let d = dogs[0]; for _ in 0..<n { s &+= d.age }; return s }
// First read on each accessor: one LMDB key lookup plus a decode.
time("first read of age on each of 100k objects", n) { var s = 0; for d in dogs { d._invalidateRowCacheForBenchmark(); s &+= d.age }; return s }
time("person.dog!.age (link hop: lookup + accessor + lookup)", n) { var s = 0; for p in people { p._invalidateRowCacheForBenchmark(); s &+= p.dog!.age }; return s }
time("enumerate Results + read name and age", n) { var s = 0; for d in realm.objects(Dog.self) { s &+= d.age + d.name.utf8.count }; return s }
time("dog.owners.count (backlink prefix scan)", n) { var s = 0; for d in dogs { s &+= d.owners.count }; return s }
time("iterate a 10-dog List and read age", listOwners.count * 10) { var s = 0; for p in listOwners { for d in p.dogs { s &+= d.age } }; return s }
let dogCount = realm.objects(Dog.self).count, personCount = realm.objects(Person.self).count
time("query scan: Dog age > 10 (ns per row scanned)", dogCount) { realm.objects(Dog.self).filter("age > 10").count }
time("query across a link: Person dog.age > 10 (ns per row scanned)", personCount) { realm.objects(Person.self).filter("dog.age > 10").count }
time("query typed: where { $0.dog.age > 10 } (ns per row scanned)", personCount) { realm.objects(Person.self).where { $0.dog.age > 10 }.count }
try? FileManager.default.removeItem(at: url)
