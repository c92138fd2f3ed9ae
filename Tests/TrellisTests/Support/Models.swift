import Foundation
import Trellis

// The seed's models, exactly as "Model Relationships - Swift SDK" writes them (to-one form).
class Person: Object {
    @Persisted var name: String = ""
    @Persisted var birthdate: Date = Date(timeIntervalSince1970: 1)

    // A person can have one dog
    @Persisted var dog: Dog?
}

class Dog: Object {
    @Persisted var name: String = ""
    @Persisted var age: Int = 0
    @Persisted var breed: String?
    // No backlink to person -- one-directional relationship
}

// The primary-key model.
class KeyedDog: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var age: Int?

    convenience init(name: String, age: Int?) {
        self.init()
        self.name = name
        self.age = age
    }
}

class PKDog: Object {
    @Persisted(primaryKey: true) var pk = ""
    @Persisted var value = 0
}

class PKOwner: Object {
    @Persisted(primaryKey: true) var pk = ""
    @Persisted var dog: PKDog?
}

class IntKeyed: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var label = ""
}

class Linked: Object {
    @Persisted var name = ""
    @Persisted var next: Linked?
}

enum Size: String, PersistableEnum { case small, medium, large }
enum Level: Int, PersistableEnum { case low = 1, high = 2 }

class AllTypes: Object {
    @Persisted var bool = false
    @Persisted var int = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double: Double = 0
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var decimal = Decimal128(0)
    @Persisted var objectId = ObjectId()
    @Persisted var uuid = UUID()
    @Persisted var any: AnyRealmValue
    @Persisted var size: Size
    @Persisted var level = Level.high
    @Persisted var optBool: Bool?
    @Persisted var optInt: Int?
    @Persisted var optInt8: Int8?
    @Persisted var optFloat: Float?
    @Persisted var optDouble: Double?
    @Persisted var optString: String?
    @Persisted var optData: Data?
    @Persisted var optDate: Date?
    @Persisted var optDecimal: Decimal128?
    @Persisted var optObjectId: ObjectId?
    @Persisted var optUUID: UUID?
    @Persisted var optSize: Size?
    var ignored = "not persisted"
}

// Embedded objects, as in the seeds' Address.
class Address: EmbeddedObject {
    @Persisted var street: String?
    @Persisted var city: String?
    @Persisted var country: String?
    @Persisted var postalCode: String?
}

class Contact: Object {
    @Persisted var name = ""
    @Persisted var address: Address?
}

// Invalid models: each breaks one schema rule.
class RequiredLink: Object {
    @Persisted var dog: Dog
}

class TwoPrimaryKeys: Object {
    @Persisted(primaryKey: true) var pk1 = 0
    @Persisted(primaryKey: true) var pk2 = 0
}

class KeyedEmbedded: EmbeddedObject {
    @Persisted(primaryKey: true) var pk = 0
}

class BoolKey: Object {
    @Persisted(primaryKey: true) var flag = false
}

class OptionalMixed: Object {
    @Persisted var value: AnyRealmValue?
}

// Same class name "Dog" in another shape, to test schema mismatch on reopen.
enum Reshaped {
    class Dog: Object {
        override class func className() -> String { "Dog" }
        @Persisted var name: String = ""
        @Persisted var age: String = ""
        @Persisted var color: String?
    }
}
