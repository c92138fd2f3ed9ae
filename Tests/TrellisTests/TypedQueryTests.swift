import Foundation
import Testing
@testable import Trellis

enum Mood: Int, PersistableEnum {
    case calm, wild
}

class Flagged: Object {
    @Persisted var mood = Mood.calm
    @Persisted var isGood = false
    @Persisted var score = 0
    @Persisted var values: List<Int>
}

/// The typed `where { }` builder renders the text Realm renders (REALM_API.md §15) and finds
/// the same objects as that text.
@Suite struct TypedQueryTests {
    let folder = TemporaryFolder()

    func text(_ build: (Query<Owner>) -> Query<Bool>) -> String { build(Query<Owner>()).description }

    @Test func rendersRealmsTextForEachRow() {
        let pet = Pet("Rex")
        #expect(text { $0.age == 5 } == "(age == %@)")
        #expect(text { $0.age != 5 } == "(age != %@)")
        #expect(text { $0.age > 5 } == "(age > %@)")
        #expect(text { $0.age >= 5 } == "(age >= %@)")
        #expect(text { $0.age < 5 } == "(age < %@)")
        #expect(text { $0.age <= 5 } == "(age <= %@)")
        #expect(text { $0.dog.name == "Rex" } == "(dog.name == %@)")
        #expect(text { $0.dog == pet } == "(dog == %@)")
        #expect(text { $0.dogs.age > 5 } == "(ANY dogs.age > %@)")
        #expect(text { $0.dogs == pet } == "(ANY dogs == %@)")
        #expect(text { $0.dogMap.values == pet } == "(ANY dogMap.@allValues == %@)")
        #expect(text { $0.nicknames.keys.starts(with: "foo", options: [.caseInsensitive, .diacriticInsensitive]) }
            == "(ANY nicknames.@allKeys BEGINSWITH[cd] %@)")
        #expect(text { $0.nicknames["foo"] == "Al" } == "(nicknames[%@] == %@)")
        #expect(text { $0.dogs.contains(pet) } == "(%@ IN dogs)")
        #expect(text { $0.parents.contains(Owner()) } == "(%@ IN parents)")
        #expect(text { $0.dogs.containsAny(in: [pet]) } == "(ANY dogs IN %@)")
        #expect(text { !$0.parents.contains(Owner()) } == "(NOT %@ IN parents)")
        #expect(text { $0.age.in([1, 3]) } == "(age IN %@)")
        #expect(text { $0.age.contains(1...5) } == "(age BETWEEN {%@, %@})")
        #expect(text { $0.age.contains(1..<5) } == "((age >= %@) && (age < %@))")
        #expect(text { $0.dog.owners.count == 3 } == "(dog.owners.@count == %@)")
        #expect(text { $0.dogs.count > 0 } == "(dogs.@count > %@)")
        #expect(text { $0.dogs.age.avg == 5 } == "(dogs.@avg.age == %@)")
        #expect(text { $0.dogs.age.min > 1 } == "(dogs.@min.age > %@)")
        #expect(text { ($0.dogs.age > 5).count > 0 } == "(SUBQUERY(dogs, $col1, ($col1.age > %@)).@count > %@)")
        #expect(text { $0.name.contains("a", options: [.caseInsensitive]) } == "(name CONTAINS[c] %@)")
        #expect(text { $0.name.starts(with: "a") } == "(name BEGINSWITH %@)")
        #expect(text { $0.name.ends(with: "a") } == "(name ENDSWITH %@)")
        #expect(text { $0.name.equals("a", options: [.caseInsensitive]) } == "(name ==[c] %@)")
        #expect(text { $0.name.notEquals("a", options: [.caseInsensitive]) } == "(name !=[c] %@)")
        #expect(text { $0.name.like("a*", caseInsensitive: true) } == "(name LIKE[c] %@)")
        #expect(text { $0.age > 1 && $0.age < 9 } == "((age > %@) && (age < %@))")
        #expect(text { $0.age > 1 || !($0.age < 9) } == "((age > %@) || (NOT age < %@))")
        #expect(Query<Flagged>().isGood.description == "isGood")
        #expect(Query<Flagged>().values.contains(1...3).description == "((values.@min >= %@) && (values.@max <= %@))")
        #expect(Query<Flagged>().values.avg.description == "values.@avg")
    }

    @Test func typedAndTextQueriesFindTheSameObjects() throws {
        let realm = try QueryEvaluationTests().fixture()
        let owners = realm.objects(Owner.self)
        let rex = realm.objects(Pet.self).filter("name == 'Rex'")[0]
        func same(_ typed: Results<Owner>, _ text: String, _ args: Any...) {
            let expected = Array(owners.filter(validatingForTest: text, args)).map(\.name)
            #expect(Array(typed).map(\.name) == expected, "\(text)")
        }
        same(owners.where { $0.age > 40 }, "age > 40")
        same(owners.where { $0.dog.age > 10 }, "dog.age > 10")
        same(owners.where { $0.dogs.age > 10 }, "ANY dogs.age > 10")
        same(owners.where { $0.dogs.contains(rex) }, "%@ IN dogs", rex)
        same(owners.where { $0.dogs.count == 2 }, "dogs.@count == 2")
        same(owners.where { $0.dogs.age.avg > 8 }, "dogs.@avg.age > 8")
        same(owners.where { ($0.dogs.age > 4 && $0.dogs.name.starts(with: "R")).count == 1 },
             "SUBQUERY(dogs, $d, $d.age > 4 AND $d.name BEGINSWITH 'R').@count == 1")
        same(owners.where { $0.nicknames["short"] == "Al" }, "nicknames['short'] == 'Al'")
        same(owners.where { $0.dogMap.values == rex }, "ANY dogMap.@allValues == %@", rex)
        same(owners.where { $0.parents.name == "Bob" }, "ANY parents.name == 'Bob'")
        same(owners.where { $0.tags.contains("brave") }, "'brave' IN tags")
        same(owners.where { $0.scores.contains(1...9) }, "scores.@min >= 1 AND scores.@max <= 9")
        same(owners.where { $0.age.contains(10..<46) }, "age >= 10 AND age < 46")
        same(owners.where { $0.name.contains("A", options: .caseInsensitive) }, "name CONTAINS[c] 'a'")
        same(owners.where { $0.dog == nil }, "dog == nil")
        same(owners.where { !($0.age > 20) || $0.dog.name == "Fido" }, "NOT age > 20 OR dog.name == 'Fido'")
    }

    @Test func boolPropertyAloneIsAPredicate() throws {
        let realm = try Realm(configuration: folder.configuration([Flagged.self]))
        try realm.write {
            for index in 0..<4 {
                let flagged = Flagged()
                flagged.isGood = index % 2 == 0
                flagged.score = index
                realm.add(flagged)
            }
        }
        #expect(realm.objects(Flagged.self).where { $0.isGood }.map(\.score) == [0, 2])
        #expect(realm.objects(Flagged.self).where { !$0.isGood }.map(\.score) == [1, 3])
        try realm.write { realm.objects(Flagged.self).filter("score == 3").first?.mood = .wild }
        #expect(Query<Flagged>().mood.rawValue.description == "mood")
        #expect(realm.objects(Flagged.self).where { $0.mood.rawValue == 1 }.map(\.score) == [3])
        #expect(realm.objects(Flagged.self).where { $0.mood == .wild }.map(\.score) == [3])
        #expect(realm.objects(Flagged.self).filter("mood == %@", Mood.calm).map(\.score) == [0, 1, 2])
    }

    @Test func keyPathsNameProperties() {
        #expect(QueryKeyPathNames.name(of: \Owner.age) == "age")
        #expect(QueryKeyPathNames.name(of: \Owner.dog?.name) == "dog.name")
        #expect(SortDescriptor(keyPath: \Owner.name, ascending: false) == SortDescriptor(keyPath: "name", ascending: false))
    }
}

extension Results {
    func filter(validatingForTest text: String, _ args: [Any]) -> Results {
        do {
            return try filter(validating: text, arguments: args)
        } catch {
            Issue.record("\(error)")
            return self
        }
    }
}
