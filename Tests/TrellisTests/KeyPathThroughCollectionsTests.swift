import Foundation
import Testing
import Trellis

final class PathPet: Object {
    @Persisted var name = ""
    @Persisted var friend: PathPet?
    @Persisted(originProperty: "pets") var owners: LinkingObjects<PathOwner>
}

final class PathTag: EmbeddedObject {
    @Persisted var label = ""
}

final class PathOwner: Object {
    @Persisted var name = ""
    @Persisted var pets: List<PathPet>
    @Persisted var favourites: MutableSet<PathPet>
    @Persisted var byNickname: Map<String, PathPet?>
    @Persisted var tags: List<PathTag>
}

/// A Swift key path may go on through a collection of objects, as in Realm's key-path
/// recording (KeyPathTests.testModernObjectTopLevel/testModernObjectNested/testEmbeddedObject:
/// `_name(for: \ModernAllTypesObject.linkingObjects[0].boolCol) == "linkingObjects.boolCol"`,
/// `\ModernKeyPathObject.map[""]??.objectCol`): the element is named by the collection's
/// property. Before, reading `[0]` of the recording prototype's empty collection trapped "Index 0
/// is out of bounds (must be less than 0)." Outside a key-path read nothing changes.
@Suite struct KeyPathThroughCollectionsTests {
    @Test func keyPathsGoOnThroughListsSetsMapsAndLinkingObjects() {
        #expect(_name(for: \PathOwner.pets[0].name) == "pets.name")
        #expect(_name(for: \PathOwner.pets[0].friend?.name) == "pets.friend.name")
        #expect(_name(for: \PathOwner.favourites[0].name) == "favourites.name")
        #expect(_name(for: \PathOwner.byNickname[""]??.name) == "byNickname.name")
        #expect(_name(for: \PathOwner.tags[0].label) == "tags.label")
        #expect(_name(for: \PathPet.owners[0].name) == "owners.name")
        #expect(_name(for: \PathPet.owners[0].pets[0].friend?.owners[0].name) == "owners.pets.friend.owners.name")
    }

    @Test func anUnmanagedCollectionOutsideAKeyPathReadIsUnchanged() async {
        let owner = PathOwner()
        #expect(owner.byNickname["none"] == nil)
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PathOwner().pets[0]
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Index 0 is out of bounds (must be less than 0)."))
    }
}
