/// Why a magnet reference names no single magnet.
public struct MagnetReferenceError: Error, Equatable, Sendable, CustomStringConvertible {
    public var reference: String
    /// The magnets it could mean (all of them when it matches none), by (replica, seq).
    public var candidates: [Magnet]
    public var ambiguous: Bool

    public var description: String {
        let list = candidates.map { "\($0.id) '\($0.letter)'" }.joined(separator: ", ")
        if ambiguous { return "'\(reference)' could be any of several magnets: \(list)" }
        if candidates.isEmpty { return "no magnet '\(reference)' on this board (it has no magnets)" }
        return "no magnet '\(reference)' on this board (magnets: \(list))"
    }
}

extension Board {
    /// The magnet a user means: tried as an exact id, then as a letter exactly one magnet bears,
    /// then as a unique id prefix.
    ///
    /// - Complexity: O(magnets).
    public func resolveMagnet(_ reference: String) -> Result<MagnetID, MagnetReferenceError> {
        if let id = MagnetID(reference), magnets[id] != nil { return .success(id) }
        let sorted = sortedMagnets
        let byLetter = sorted.filter { $0.letter == reference }
        if byLetter.count == 1 { return .success(byLetter[0].id) }
        if byLetter.count > 1 {
            return .failure(MagnetReferenceError(reference: reference, candidates: byLetter, ambiguous: true))
        }
        let byPrefix = reference.isEmpty ? [] : sorted.filter { $0.id.description.hasPrefix(reference) }
        if byPrefix.count == 1 { return .success(byPrefix[0].id) }
        if byPrefix.count > 1 {
            return .failure(MagnetReferenceError(reference: reference, candidates: byPrefix, ambiguous: true))
        }
        return .failure(MagnetReferenceError(reference: reference, candidates: sorted, ambiguous: false))
    }
}
