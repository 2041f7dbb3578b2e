/// Why a magnet reference names no single magnet.
public struct MagnetReferenceError: Error, Equatable, Sendable, CustomStringConvertible {
    public var reference: String
    /// The magnets it could mean (all of them when it matches none), by (replica, seq).
    public var candidates: [Magnet]
    public var ambiguous: Bool

    public var description: String {
        let reference = Validation.quoted(reference)
        let list = candidates.map { "\($0.id) '\($0.letter)'" }.joined(separator: ", ")
        if ambiguous { return "'\(reference)' could be any of several magnets: \(list)" }
        if candidates.isEmpty { return "no magnet '\(reference)' on this board (it has no magnets)" }
        return "no magnet '\(reference)' on this board (magnets: \(list))"
    }
}

extension Board {
    /// The magnet a user means (SPEC §3, §6): tried as an exact id, then as a letter exactly one
    /// magnet bears, then as a shortened id — the replica part cut to a prefix that only one of
    /// the magnets with that number has (`a-7`, `al-7` for `alice-7`). The number is always whole:
    /// `alice-1` never means `alice-12`. Anything else fails with the candidates.
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
        if let short = Self.shortenedID(reference) {
            let matches = sorted.filter { $0.id.seq == short.seq && $0.id.replica.hasPrefix(short.replicaPrefix) }
            if matches.count == 1 { return .success(matches[0].id) }
            if matches.count > 1 {
                return .failure(MagnetReferenceError(reference: reference, candidates: matches, ambiguous: true))
            }
        }
        return .failure(MagnetReferenceError(reference: reference, candidates: sorted, ambiguous: false))
    }

    /// `PREFIX-SEQ`: a non-empty start of a replica id, a dash, a whole number ≥ 1.
    static func shortenedID(_ reference: String) -> (replicaPrefix: String, seq: Int)? {
        guard let dash = reference.lastIndex(of: "-"), dash != reference.startIndex else { return nil }
        let digits = reference[reference.index(after: dash)...]
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (48...57).contains($0) }), let seq = Int(digits), seq >= 1
        else { return nil }
        return (String(reference[..<dash]), seq)
    }
}
