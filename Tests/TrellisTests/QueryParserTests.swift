import Foundation
import Testing
@testable import Trellis

/// The predicate language: every construct parses to the tree it means (checked through the
/// tree's rendering), and bad text gives a message that says what and where.
@Suite struct QueryParserTests {
    func render(_ text: String, _ args: [Any] = []) throws -> String {
        try QueryParser.parse(text, arguments: args.map(QueryArguments.value)).description
    }

    func failure(_ text: String, _ args: [Any] = []) -> QueryError? {
        do {
            _ = try QueryParser.parse(text, arguments: args.map(QueryArguments.value))
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        ("age == 5", "(age == 5)"),
        ("age = 5", "(age == 5)"),
        ("age != 5", "(age != 5)"),
        ("age <> 5", "(age != 5)"),
        ("age < 5", "(age < 5)"),
        ("age <= 5", "(age <= 5)"),
        ("age =< 5", "(age <= 5)"),
        ("age > 5", "(age > 5)"),
        ("age >= 5", "(age >= 5)"),
        ("age => 5", "(age >= 5)"),
        ("age BETWEEN {1, 5}", "(age BETWEEN {1, 5})"),
        ("age IN {1, 2, 3}", "(age IN {1, 2, 3})"),
        ("name BEGINSWITH 'R'", "(name BEGINSWITH \"R\")"),
        ("name endswith[c] \"x\"", "(name ENDSWITH[c] \"x\")"),
        ("name CONTAINS[d] 'é'", "(name CONTAINS[d] \"é\")"),
        ("name LIKE[cd] 'R*x?'", "(name LIKE[cd] \"R*x?\")"),
        ("name ==[c] 'a'", "(name ==[c] \"a\")"),
        ("a == 1 AND b == 2 OR c == 3", "(((a == 1) && (b == 2)) || (c == 3))"),
        ("a == 1 && (b == 2 || c == 3)", "((a == 1) && ((b == 2) || (c == 3)))"),
        ("NOT a == 1", "(NOT a == 1)"),
        ("!(a == 1)", "(NOT a == 1)"),
        ("TRUEPREDICATE", "TRUEPREDICATE"),
        ("falsepredicate", "FALSEPREDICATE"),
        ("flag == true AND other == FALSE", "((flag == true) && (other == false))"),
        ("dog == nil OR dog == NULL", "((dog == nil) || (dog == nil))"),
        ("ratio > -1.5e2", "(ratio > -150.0)"),
        ("mask == 0x1F", "(mask == 31)"),
        ("_id == oid(507f1f77bcf86cd799439011)", "(_id == oid(507f1f77bcf86cd799439011))"),
        ("id == uuid(137DECC8-B300-4954-A233-F89909F4FD89)", "(id == uuid(137DECC8-B300-4954-A233-F89909F4FD89))"),
        ("born > 2023-01-01", "(born > T1672531200:0)"),
        ("born > 2023-01-01@10:30:00", "(born > T1672569000:0)"),
        ("born > T1672531200:500000000", "(born > T1672531200:500000000)"),
        ("dog.owner.name == 'x'", "(dog.owner.name == \"x\")"),
        ("ANY dogs.age > 5", "(ANY dogs.age > 5)"),
        ("SOME dogs.age > 5", "(ANY dogs.age > 5)"),
        ("ALL dogs.age > 5", "(ALL dogs.age > 5)"),
        ("NONE dogs.age > 5", "(NONE dogs.age > 5)"),
        ("dogs.@count > 1", "(dogs.@count > 1)"),
        ("dogs.@size > 1", "(dogs.@size > 1)"),
        ("dogs.@avg.age > 1", "(dogs.@avg.age > 1)"),
        ("scores.@min < 1 AND scores.@max > 2 AND scores.@sum == 3", "(((scores.@min < 1) && (scores.@max > 2)) && (scores.@sum == 3))"),
        ("map['key'] == 1", "(map[\"key\"] == 1)"),
        ("ANY map.@allKeys == 'a'", "(ANY map.@allKeys == \"a\")"),
        ("ANY map.@allValues == 'a'", "(ANY map.@allValues == \"a\")"),
        ("SUBQUERY(dogs, $d, $d.age > 5 AND $d.name == 'x').@count > 1", "(SUBQUERY(dogs, $d, (($d.age > 5) && ($d.name == \"x\"))).@count > 1)"),
        ("@links.Person.dogs.@count > 2", "(@links.Person.dogs.@count > 2)"),
        ("@links.@count == 0", "(@links.@count == 0)"),
        ("ANY @links.Person.dogs.name == 'x'", "(ANY @links.Person.dogs.name == \"x\")"),
        ("5 IN scores", "(5 IN scores)"),
    ])
    func parsesEveryConstruct(text: String, rendered: String) throws {
        #expect(try render(text) == rendered)
    }

    @Test func keywordsMatchAnyCaseOfTheirASCIILettersOnly() throws {
        #expect(try render("a == 1 aNd b == 2") == "((a == 1) && (b == 2))")
        #expect(try render("a == 1 oR NoT b == 2") == "((a == 1) || (NOT b == 2))")
        #expect(QueryToken.spells("SubQuery", "SUBQUERY"))
        // Unicode case folding would take U+017F (long s) for "s"; realm-core's grammar does not.
        #expect(!QueryToken.spells("\u{17F}ubquery", "SUBQUERY"))
        #expect(!QueryToken.spells("AN", "AND"))
        #expect(!QueryToken.spells("@ND", "`ND"))
    }

    @Test func substitutesArguments() throws {
        #expect(try render("age > %@ AND name == %@", [5, "Rex"]) == "((age > %@) && (name == %@))")
        #expect(try render("%K == %@", ["name", "Rex"]) == "(name == %@)")
        #expect(try render("age BETWEEN %@", [[1, 5]]) == "(age BETWEEN %@)")
        #expect(try render("$1 < age AND age < $0", [50, 40]) == "((%@ < age) && (age < %@))")
        let parsed = try QueryParser.parse("age == $1", arguments: [.int(1), .int(2)])
        guard case .comparison(let c) = parsed, case .argument(.int(2)) = c.rhs else {
            Issue.record("positional argument not substituted")
            return
        }
    }

    @Test(arguments: [
        ("age >", "expected a property name or a value but the text ended", 5),
        ("age > > 3", "expected a property name or a value but found '>'", 6),
        ("age 5", "expected a comparison operator but found '5'", 4),
        ("(age > 5", "expected ')' but found the end of the text", 8),
        ("age > 5)", "unexpected ')' after the end of the predicate", 7),
        ("name == 'abc", "unterminated string", 8),
        ("age # 5", "unexpected character '#'", 4),
        ("age > %@", "the predicate uses argument 0 but only 0 arguments were given", 6),
        ("name BEGINSWITH[x] 'a'", "unknown string option 'x': use [c], [d] or [cd]", 16),
        ("dogs.@foo > 1", "unsupported collection operation '@foo' (use @count, @size, @min, @max, @sum, @avg, @allKeys, @allValues, @keys, @values or @links)", 5),
        ("SUBQUERY(dogs, $d, $d.age > 1) > 1", "SUBQUERY is only supported when immediately followed by .@count", 0),
        ("_id == oid(xyz)", "'xyz' is not a valid ObjectId: expected 24 hexadecimal digits", 7),
        ("name MATCHES 'a'", "the operator 'MATCHES' is not supported (use LIKE with '*' and '?' wildcards)", 5),
    ])
    func rejectsInvalidTextWithPosition(text: String, message: String, offset: Int) {
        let error = failure(text)
        #expect(error?.message == message)
        #expect(error?.offset == offset)
    }

    @Test func errorMessageQuotesTheTextAndPointsAtTheProblem() {
        let error = QueryError(message: "expected a property name or a value but found '>'", offset: 6)
        #expect(QueryParser.message(for: error, in: "age > > 3") == """
            Invalid predicate 'age > > 3' at offset 6: expected a property name or a value but found '>'.
                age > > 3
                      ^
            """)
    }
}
