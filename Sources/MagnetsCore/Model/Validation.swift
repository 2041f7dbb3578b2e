/// The rules for everything a user or a file can name: letters, colors, replica ids, names and
/// numbers. The CLI checks input with these before a file is opened, and the store checks every
/// op read from a file or bundle with them before it can reach a board.
public enum Validation {
    /// Board sides: finite, 1…100 000.
    public static let boardSideRange: ClosedRange<Double> = 1...100_000
    /// Magnet sides: finite, 1…1000.
    public static let magnetSideRange: ClosedRange<Double> = 1...1000
    /// The largest magnitude accepted for a coordinate anywhere (points, rects, paths).
    public static let coordinateLimit: Double = 1_000_000
    /// The most points a path may have.
    public static let maxPathPoints = 10_000
    /// The largest count a single `tray.add` may add, and the most a tile can hold.
    public static let maxTileCount = 1_000_000_000
    /// The largest zone capacity.
    public static let maxCapacity = 1_000_000

    /// `[a-z][a-z0-9_]{0,31}`.
    public static func isReplicaID(_ s: String) -> Bool { isReplicaID(s.utf8) }

    /// A replica id given as its UTF-8 bytes.
    static func isReplicaID(_ bytes: some Collection<UInt8>) -> Bool {
        guard (1...32).contains(bytes.count), let first = bytes.first, (97...122).contains(first) else { return false }
        return bytes.dropFirst().allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 95 }
    }

    /// A color name: `[a-z][a-z0-9-]{0,31}`.
    public static func isColor(_ s: String) -> Bool {
        let bytes = s.utf8
        guard (1...32).contains(bytes.count), let first = bytes.first, (97...122).contains(first) else { return false }
        return bytes.dropFirst().allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 45 }
    }

    /// A zone or boundary name: 1–64 characters, no whitespace, control or format characters, no
    /// commas (lists of names are comma-separated).
    public static func isName(_ s: String) -> Bool {
        guard (1...64).contains(s.count) else { return false }
        return s.unicodeScalars.allSatisfy { scalar in
            !scalar.properties.isWhitespace && !isControlOrFormat(scalar) && scalar != ","
        }
    }

    /// An author name: 1–64 characters with no control characters.
    public static func isAuthor(_ s: String) -> Bool {
        // Printable ASCII (nearly every name) is one character per byte and never a control;
        // anything else is counted and looked up character by character.
        let bytes = s.utf8
        if bytes.count <= 64, bytes.allSatisfy({ (0x20...0x7E).contains($0) }) { return !bytes.isEmpty }
        return (1...64).contains(s.count) && !s.unicodeScalars.contains(where: { isControl($0) })
    }

    /// Why `s` cannot be a magnet's letter, or `nil` when it can: exactly one grapheme cluster,
    /// not whitespace, a control or a format character.
    public static func letterProblem(_ s: String) -> String? {
        guard s.count == 1 else {
            return s.isEmpty ? "a letter cannot be empty" : "'\(quoted(s))' is \(s.count) letters, not one"
        }
        if s.unicodeScalars.contains(where: { $0.properties.isWhitespace }) {
            return "a letter cannot be whitespace"
        }
        // A format character may join the parts of one emoji (U+200D), but it cannot be the
        // letter itself; control, unassigned and private-use characters are never letters.
        let scalars = Array(s.unicodeScalars)
        if isFormat(scalars[0]) || scalars.contains(where: { isControl($0) }) {
            return "a letter cannot be a control or format character"
        }
        return nil
    }

    static func isFormat(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .format
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator:
            return true
        default:
            return false
        }
    }

    static func isControlOrFormat(_ scalar: Unicode.Scalar) -> Bool {
        isControl(scalar) || isFormat(scalar)
    }

    /// `true` when the number is finite and within `range`.
    public static func isValid(_ value: Double, in range: ClosedRange<Double>) -> Bool {
        value.isFinite && range.contains(value)
    }

    /// `true` when the point's coordinates are finite and within `coordinateLimit`.
    public static func isValid(_ p: Point) -> Bool {
        p.isFinite && abs(p.x) <= coordinateLimit && abs(p.y) <= coordinateLimit
    }
}

extension Validation {
    /// A board name: 0–64 characters with no control characters.
    public static func isBoardName(_ s: String) -> Bool {
        s.count <= 64 && !s.unicodeScalars.contains(where: { isControl($0) })
    }

    /// A board name on a server (SPEC §7): `[a-z0-9][a-z0-9_-]{0,63}`.
    public static func isServerBoardName(_ s: some StringProtocol) -> Bool {
        let bytes = s.utf8
        guard (1...64).contains(bytes.count), let first = bytes.first else { return false }
        func isLowerOrDigit(_ b: UInt8) -> Bool { (97...122).contains(b) || (48...57).contains(b) }
        return isLowerOrDigit(first) && bytes.allSatisfy { isLowerOrDigit($0) || $0 == 95 || $0 == 45 }
    }
}

// MARK: - Names and ids: the sentence a user is told, once for every door it comes in by

extension Validation {
    /// Why `s` cannot be a replica id, or `nil`.
    public static func replicaIDProblem(_ s: String) -> String? {
        isReplicaID(s) ? nil : "replica id '\(quoted(s))' must match [a-z][a-z0-9_]{0,31}"
    }

    /// Why `s` cannot be an author's name, or `nil`.
    public static func authorProblem(_ s: String) -> String? {
        isAuthor(s) ? nil : "an author name is 1–64 characters with no control characters"
    }

    /// Why `s` cannot be a color, or `nil`.
    public static func colorProblem(_ s: String) -> String? {
        isColor(s) ? nil : "color '\(quoted(s))' must match [a-z][a-z0-9-]{0,31} (e.g. red)"
    }

    /// Why `s` cannot be the name of a zone or boundary (`what`), or `nil`.
    public static func nameProblem(_ s: String, of what: String) -> String? {
        isName(s)
            ? nil
            : "\(what) name '\(quoted(s))' must be 1–64 characters without spaces, commas, control or format characters"
    }

    /// Why `s` cannot be a board's name in its file, or `nil`.
    public static func boardNameProblem(_ s: String) -> String? {
        isBoardName(s) ? nil : "a board name is at most 64 characters, none of them control characters"
    }

    /// Why `s` cannot be a board's name on a server, or `nil`.
    public static func serverBoardNameProblem(_ s: String) -> String? {
        isServerBoardName(s) ? nil : "board name '\(quoted(s))' must match [a-z0-9][a-z0-9_-]{0,63}"
    }

    /// Why `m` cannot be a magnet id, or `nil`.
    public static func magnetIDProblem(_ m: MagnetID) -> String? {
        isReplicaID(m.replica) && m.seq >= 1 ? nil : "'\(quoted(m.description))' is not a magnet id"
    }
}

// MARK: - Values: each rule once, for `Payload.problem` and the command line alike

extension Validation {
    /// Why `p` cannot be a point (non-finite, beyond ±1e6), or `nil`.
    public static func pointProblem(_ p: Point) -> String? {
        isValid(p) ? nil : "a point must be finite and within ±1e6"
    }

    /// Why `points` cannot be a path (empty, too long, a bad point), or `nil`.
    public static func pathProblem(_ points: [Point]) -> String? {
        if points.isEmpty { return "a path needs at least one point" }
        if points.count > maxPathPoints { return "a path has at most \(maxPathPoints) points" }
        return points.lazy.compactMap(pointProblem).first
    }

    /// Why `r` cannot be a zone's rect (its corner out of range, a side not positive or too large), or `nil`.
    public static func rectProblem(_ r: Rect) -> String? {
        if !isValid(r.origin) || !(r.width > 0) || !(r.height > 0)
            || r.width > 2 * coordinateLimit || r.height > 2 * coordinateLimit
        {
            return "a zone's rect must be finite with positive width and height"
        }
        return nil
    }

    /// Why `size` cannot be a board's size (each side 1…100000), or `nil`.
    public static func boardSizeProblem(_ size: Size) -> String? {
        isValid(size.width, in: boardSideRange) && isValid(size.height, in: boardSideRange)
            ? nil : "board sides must be 1…100000"
    }

    /// Why `size` cannot be a magnet's size (each side 1…1000), or `nil`.
    public static func magnetSizeProblem(_ size: Size) -> String? {
        isValid(size.width, in: magnetSideRange) && isValid(size.height, in: magnetSideRange)
            ? nil : "magnet sides must be 1…1000"
    }

    /// Why `count` cannot be added to a tile (1…1e9), or `nil`.
    public static func countProblem(_ count: Int) -> String? {
        (1...maxTileCount).contains(count) ? nil : "count must be 1…\(maxTileCount)"
    }

    /// Why `capacity` cannot be a zone's (1…1e6), or `nil`.
    public static func capacityProblem(_ capacity: Int) -> String? {
        (1...maxCapacity).contains(capacity) ? nil : "capacity must be 1…\(maxCapacity)"
    }
}

// MARK: - Quoting what a user typed in a message

extension Validation {
    /// The most characters of a user's text a message quotes back.
    public static let quoteLimit = 80

    /// `text` as an error or refusal message quotes it: unchanged when it is at most `limit`
    /// characters (grapheme clusters, not bytes), else its first `limit` characters and `…`; a
    /// character of very many scalars (a letter under thousands of combining marks) ends it early,
    /// so what is quoted stays within `8 × limit` scalars. Control characters, line and paragraph
    /// separators and bidirectional controls are written as escapes (`\n`, `\u{1B}`), so a
    /// quoted text cannot break a message's line or rewrite the terminal that shows it.
    public static func quoted(_ text: some StringProtocol, limit: Int = quoteLimit) -> String {
        let limit = max(0, limit)
        var out = ""
        var characters = 0
        var scalarsLeft = 8 * limit
        for character in text {
            if characters == limit { return out + "…" }
            let scalars = character.unicodeScalars
            for (n, scalar) in scalars.enumerated() {
                if n == scalarsLeft { return out + "…" }
                appendEscaped(scalar, to: &out)
            }
            scalarsLeft -= scalars.count
            characters += 1
        }
        return out
    }

    private static func appendEscaped(_ scalar: Unicode.Scalar, to out: inout String) {
        switch scalar {
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if isUnsafeInMessage(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }

    /// C0 and C1 controls, DEL, U+2028/U+2029 and the bidirectional marks, embeddings, overrides
    /// and isolates.
    private static func isUnsafeInMessage(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
            return true
        default:
            return false
        }
    }
}
