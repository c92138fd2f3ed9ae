import Foundation
import Testing
@testable import Trellis

// Models for the descriptions Realm prints (RLMProperty / RLMObjectSchema / RLMSchema
// description; Realm's ObjectSchemaTests.testDescription and CustomColumnNamesSchemaTest
// .testDescriptionWithCustomColumnName give the expected text).
final class SchemaDescribedOwner: Object {
    @Persisted(primaryKey: true) var pk: ObjectId
    @Persisted var price: Decimal128
    @Persisted var pet: SchemaDescribedPet?
    @Persisted var pets: List<SchemaDescribedPet>
    @Persisted var tags: MutableSet<String?>
    @Persisted var ratings: Map<String, Int>

    override class func propertiesMapping() -> [String: String] { ["pk": "custom_pk"] }
}

final class SchemaDescribedPet: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "pets") var owners: LinkingObjects<SchemaDescribedOwner>
}

final class SchemaDescribedCollar: EmbeddedObject {
    @Persisted var size = 0.0
}

@Suite struct SchemaDescriptionTests {
    /// Realm's expected texts are written with four spaces per level, then turned into tabs.
    private func tabs(_ text: String) -> String { text.replacingOccurrences(of: "    ", with: "\t") }

    @Test func aPropertyPrintsEveryFieldAsRealmDoes() throws {
        let pk = try #require(SchemaDescribedOwner().objectSchema["pk"])
        #expect(pk.description == tabs("""
            pk {
                type = object id;
                columnName = custom_pk;
                indexed = YES;
                isPrimary = YES;
                array = NO;
                set = NO;
                dictionary = NO;
                optional = NO;
            }
            """))
    }

    @Test func anObjectSchemaPrintsItsPropertiesIndentedThenItsLinkingObjects() {
        let expected = """
            SchemaDescribedOwner {
                pk {
                    type = object id;
                    columnName = custom_pk;
                    indexed = YES;
                    isPrimary = YES;
                    array = NO;
                    set = NO;
                    dictionary = NO;
                    optional = NO;
                }
                price {
                    type = decimal128;
                    columnName = price;
                    indexed = NO;
                    isPrimary = NO;
                    array = NO;
                    set = NO;
                    dictionary = NO;
                    optional = NO;
                }
                pet {
                    type = object;
                    objectClassName = SchemaDescribedPet;
                    linkOriginPropertyName = (null);
                    columnName = pet;
                    indexed = NO;
                    isPrimary = NO;
                    array = NO;
                    set = NO;
                    dictionary = NO;
                    optional = YES;
                }
                pets {
                    type = object;
                    objectClassName = SchemaDescribedPet;
                    linkOriginPropertyName = (null);
                    columnName = pets;
                    indexed = NO;
                    isPrimary = NO;
                    array = YES;
                    set = NO;
                    dictionary = NO;
                    optional = NO;
                }
                tags {
                    type = string;
                    columnName = tags;
                    indexed = NO;
                    isPrimary = NO;
                    array = NO;
                    set = YES;
                    dictionary = NO;
                    optional = YES;
                }
                ratings {
                    type = int;
                    columnName = ratings;
                    indexed = NO;
                    isPrimary = NO;
                    array = NO;
                    set = NO;
                    dictionary = YES;
                    optional = NO;
                }
            }
            """
        #expect(SchemaDescribedOwner().objectSchema.description == tabs(expected))
    }

    @Test func linkingObjectsNameTheirOriginPropertyAndEmbeddedClassesSaySo() {
        #expect(SchemaDescribedPet().objectSchema.description.hasSuffix(tabs("""
                owners {
                    type = linking objects;
                    objectClassName = SchemaDescribedOwner;
                    linkOriginPropertyName = pets;
                    columnName = owners;
                    indexed = NO;
                    isPrimary = NO;
                    array = YES;
                    set = NO;
                    dictionary = NO;
                    optional = NO;
                }
            }
            """)))
        #expect(SchemaDescribedCollar().objectSchema.description
            .hasPrefix("SchemaDescribedCollar (embedded) {\n\tsize {\n\t\ttype = double;\n"))
    }

    @Test func aSchemaPrintsItsClassesByNameEachIndented() throws {
        let folder = TemporaryFolder()
        let realm = try Realm(configuration: folder.configuration([SchemaDescribedPet.self, SchemaDescribedOwner.self]))
        let owner = SchemaDescribedOwner().objectSchema.description.replacingOccurrences(of: "\n", with: "\n\t")
        let pet = SchemaDescribedPet().objectSchema.description.replacingOccurrences(of: "\n", with: "\n\t")
        #expect(realm.schema.description == "Schema {\n\t\(owner)\n\t\(pet)\n}")
    }

    /// ProjectionTests.testDescription: a projected collection is named by the collection it
    /// reads (`\.friends`), as Realm's `_name(for:)` names `\.friends.projectTo.firstName`.
    @Test func aProjectedCollectionIsDescribedByItsCollectionsKeyPath() throws {
        let folder = TemporaryFolder()
        let realm = try Realm(configuration: folder.configuration([ProjectedPerson.self, ProjectedAddress.self]))
        let view = try realm.write {
            let ann = realm.create(ProjectedPerson.self, value: ["id": 1, "firstName": "Ann", "lastName": "Lee"])
            ann.friends.append(realm.create(ProjectedPerson.self, value: ["id": 2, "firstName": "Bob"]))
            return PersonView(projecting: ann)
        }
        #expect(view.description.hasSuffix(
            "\tfriendNames(\\.friends) = ProjectedCollection<String> {\n\t[0] Bob\n};\n}"))
        #expect(view.description.contains("\tname(\\.firstName) = Ann;\n"))
    }
}
