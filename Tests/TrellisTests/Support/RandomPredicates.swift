import TrellisTestSupport
/// Random predicates for the differential tests: a query text and the same test in Swift.
enum RandomPredicates {
    typealias Case<Facts> = (text: String, test: (Facts) -> Bool)

    /// A leaf, or up to `depth` levels of `AND`, `OR` and `NOT` over leaves.
    static func combination<Facts>(_ g: inout SplitMix64, depth: Int,
                                   leaf: (inout SplitMix64) -> Case<Facts>) -> Case<Facts>
    {
        if depth == 0 || Int.random(in: 0..<3, using: &g) == 0 { return leaf(&g) }
        let a = combination(&g, depth: depth - 1, leaf: leaf)
        switch Int.random(in: 0..<3, using: &g) {
        case 0:
            let b = combination(&g, depth: depth - 1, leaf: leaf)
            return ("(\(a.text)) AND (\(b.text))", { a.test($0) && b.test($0) })
        case 1:
            let b = combination(&g, depth: depth - 1, leaf: leaf)
            return ("(\(a.text)) OR (\(b.text))", { a.test($0) || b.test($0) })
        default:
            return ("NOT (\(a.text))", { !a.test($0) })
        }
    }
}
