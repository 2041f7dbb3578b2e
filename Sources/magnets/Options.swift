import ArgumentParser
import Foundation
import MagnetsCore
import MagnetsRemote
import MagnetsStore
import Synchronization

// MARK: - Shared options

/// `-b/--board PATH`: the board file, for every command that works on one.
struct BoardFileOption: ParsableArguments {
    @Option(
        name: [.customShort("b"), .customLong("board")],
        help: ArgumentHelp("The board file (env MAGNETS_BOARD, else ./board.magnets).", valueName: "file"),
        completion: .file(extensions: ["magnets"]))
    var board: String?

    func validate() throws {
        if let board, board.isEmpty { throw ValidationError("--board needs a path") }
    }

    /// The board file's path.
    var boardPath: String { board ?? Self.environmentBoard ?? "./board.magnets" }

    static var environmentBoard: String? { Environment.value("MAGNETS_BOARD").flatMap { $0.isEmpty ? nil : $0 } }

    /// Opens the board file (refusing a missing or foreign one) for a command that writes, or with
    /// `.reading` for one that only reads (which then works where writing cannot: read-only
    /// media, a full disk). It is closed when the command has finished (see `OpenFiles`).
    func open(for purpose: BoardFile.Purpose = .writing) throws -> BoardFile {
        do {
            return OpenFiles.keep(try BoardFile.open(boardPath, for: purpose))
        } catch StoreError.missingFile(let path) where board == nil && Self.environmentBoard == nil {
            // No -b: perhaps it was forgotten, and the boards are right here.
            let here = ((try? FileManager.default.contentsOfDirectory(atPath: ".")) ?? [])
                .filter { $0.hasSuffix(".magnets") && !$0.hasPrefix(".") }.sorted()
            guard !here.isEmpty else { throw StoreError.missingFile(path) }
            let example = (["magnets"] + CommandLine.arguments.dropFirst() + ["-b", here[0]]).map(Shell.quote).joined(
                separator: " ")
            throw HintedError(
                message: "\(path) does not exist (it is the board used when no -b is given)",
                hint: "board files here: \(here.joined(separator: ", ")) — name one with -b, as in "
                    + "\(example), or set MAGNETS_BOARD")
        }
    }
}

/// `--json`, for every command that prints a result.
struct JSONOption: ParsableArguments {
    @Flag(name: .long, help: "Machine-readable output.")
    var json = false
}

/// `--as NAME`, for every command that records ops.
struct AuthorOption: ParsableArguments {
    @Option(
        name: .customLong("as"),
        help: ArgumentHelp("The author (env MAGNETS_USER, else the file's replica id).", valueName: "name"))
    var author: String?

    func validate() throws {
        if let author { try Arguments.checkAuthor(author) }
    }

    /// Who is editing (SPEC §6): `--as`, else `MAGNETS_USER`, else the replica id of the file
    /// edited (`replica`).
    func name(replica: String) -> String {
        if let author { return author }
        if let env = Environment.value("MAGNETS_USER"), (try? Arguments.checkAuthor(env)) != nil { return env }
        return replica
    }
}

/// `-b` and `--json`: the options of a command that reads a board and prints what it finds.
struct BoardOptions: ParsableArguments {
    @OptionGroup var file: BoardFileOption
    @OptionGroup var output: JSONOption

    var json: Bool { output.json }
    var boardPath: String { file.boardPath }
    func open(for purpose: BoardFile.Purpose = .writing) throws -> BoardFile { try file.open(for: purpose) }
}

/// `-b`, `--json` and `--as`: the options of a command that records ops.
struct EditOptions: ParsableArguments {
    @OptionGroup var file: BoardFileOption
    @OptionGroup var output: JSONOption
    @OptionGroup var author: AuthorOption

    var json: Bool { output.json }
    var boardPath: String { file.boardPath }
    func open() throws -> BoardFile { try file.open() }

    /// Who is editing a file of replica `replica` (see `AuthorOption`).
    func author(replica: String) -> String { author.name(replica: replica) }

    /// Opens the board file and records the op `make` gives, by `author(replica:)`.
    func record(_ make: (Board) throws -> Payload) throws -> Recorded {
        let file = try open()
        return try file.record(author: author(replica: file.replica), make)
    }

    /// Opens the board file and records the op of `command`, by `author(replica:)`.
    func run(_ command: EditCommand) throws -> EditResult {
        let file = try open()
        return try file.run(command, author: author(replica: file.replica))
    }
}

/// Completions that look into the board file.
enum Completion {
    /// The magnets on the board named by `-b`/`--board` among the words typed so far (else
    /// `MAGNETS_BOARD`, else `./board.magnets`): their ids, and each letter only one magnet bears.
    /// All of them: the shells filter by what is typed (argument-parser's `prefix` argument was
    /// seen to come from another word).
    static let magnets = CompletionKind.custom { words, _, _ in
        var path = BoardFileOption.environmentBoard ?? "./board.magnets"
        for (i, word) in words.enumerated() {
            if word == "-b" || word == "--board", i + 1 < words.count { path = words[i + 1] }
            if word.hasPrefix("--board=") { path = String(word.dropFirst("--board=".count)) }
        }
        guard let file = try? BoardFile.open(path, for: .reading) else { return [] }
        defer { try? file.close() }
        guard let board = try? file.current().board else { return [] }
        let magnets = board.sortedMagnets
        let letters = Dictionary(grouping: magnets, by: \.letter).filter { $0.value.count == 1 }.keys.sorted()
        return magnets.map(\.id.description) + letters
    }
}

/// The board files a command opened, closed by `Magnets.main` when the command is over (each
/// close copies the write-ahead log into its file and removes the log, so that the `.magnets`
/// file alone is the board).
enum OpenFiles {
    private static let files = Mutex<[BoardFile]>([])

    static func keep(_ file: BoardFile) -> BoardFile {
        files.withLock { $0.append(file) }
        return file
    }

    /// Opens two files (`sync`), kept like `keep`: should both fail, the first one's error is the one thrown.
    static func openTwo(_ a: String, _ b: String) throws -> (BoardFile, BoardFile) {
        let fileA = keep(try BoardFile.open(a))
        return (fileA, keep(try BoardFile.open(b)))
    }

    /// Closes them all. Nothing is lost when a close fails: what was committed is in the log,
    /// which the next opening reads.
    static func closeAll() {
        for file in files.withLock({ $0 }) { try? file.close() }
    }
}

/// `--token` for a board on a server (SPEC §7); `MAGNETS_TOKEN` when not given.
struct RemoteOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The token for a board on a server (default: $MAGNETS_TOKEN); see 'magnets server token'.",
            valueName: "token"))
    var token: String?

    @Option(
        help: ArgumentHelp(
            "How long to wait for a server that stops answering, in seconds (default: 60).", valueName: "seconds"))
    var timeout: Double?

    func validate() throws {
        if let timeout, !(timeout > 0 && timeout <= 86_400) {
            throw ValidationError("--timeout must be a number of seconds above 0, at most 86400")
        }
    }

    /// The board at `address`, with the token to show it.
    func board(_ address: String) throws -> RemoteClient {
        try RemoteClient(
            address, token: token ?? Environment.value("MAGNETS_TOKEN"),
            timeout: timeout.map { .milliseconds(Int64(($0 * 1000).rounded(.up))) } ?? ClientExchange.timeout)
    }

    /// A new file from the board at `address`, its whole log read as it arrives.
    func clone(_ address: String, to destination: String, replica: String) async throws -> BoardFile {
        let board = try board(address)
        return try await board.readOps(since: nil) { answer in
            try await BoardFile.clone(from: answer, of: board.address, to: destination, replica: replica)
        }
    }
}

/// Environment variables, each read on its own (`ProcessInfo.environment` copies them all into a
/// dictionary first: a cost every command would pay at start-up).
enum Environment {
    static func value(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}

/// Parsing and checking of what users type.
enum Arguments {
    /// A plain decimal number (`12`, `-3.5`, `1e3`): finite, no hex, no `nan` or `inf`.
    static func number(_ text: Substring) -> Double? {
        // Spaces and tabs around it are ignored (not line breaks); no Foundation on this path,
        // which every command that takes a point runs.
        func blank(_ c: Character) -> Bool { c.isWhitespace && !c.isNewline }
        var t = text
        while let c = t.first, blank(c) { t.removeFirst() }
        while let c = t.last, blank(c) { t.removeLast() }
        guard !t.isEmpty,
            t.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || "+-.eE".utf8.contains($0) }),
            let value = Double(t), value.isFinite
        else { return nil }
        return value
    }

    /// `count` comma-separated numbers.
    static func numbers(_ text: String, count: Int, separator: Character = ",") -> [Double]? {
        let parts = text.split(separator: separator, omittingEmptySubsequences: false)
        guard parts.count == count else { return nil }
        let values = parts.compactMap(number)
        return values.count == count ? values : nil
    }

    static func checkAuthor(_ name: String) throws {
        if let problem = Validation.authorProblem(name) { throw ValidationError("--as: \(problem)") }
    }

    /// The login name, if there is one.
    static var loginName: String? {
        if let name = Environment.value("USER"), !name.isEmpty { return name }
        if let p = getlogin(), let name = String(validatingCString: p), !name.isEmpty { return name }
        if let pw = getpwuid(geteuid()), let name = String(validatingCString: pw.pointee.pw_name), !name.isEmpty {
            return name
        }
        return nil
    }

    /// The login name made to fit `[a-z][a-z0-9_]{0,31}` (else `me`).
    static var defaultReplica: String {
        guard let name = loginName?.lowercased() else { return "me" }
        var id = String(
            name.unicodeScalars.map { scalar -> Character in
                let c = Character(scalar)
                return (c.isASCII && (c.isLetter || c.isNumber)) ? c : "_"
            })
        if let first = id.first, !(first.isASCII && first.isLetter) { id = "r" + id }
        id = String(id.prefix(32))
        return Validation.isReplicaID(id) ? id : "me"
    }

    /// A letter as users type it, NFC-normalised and checked.
    static func letter(_ text: String) throws -> String {
        let nfc = text.precomposedStringWithCanonicalMapping
        if let problem = Validation.letterProblem(nfc) { throw ValidationError(problem) }
        return nfc
    }

    static func color(_ text: String) throws -> String {
        if let problem = Validation.colorProblem(text) { throw ValidationError(problem) }
        return text
    }

    static func name(_ text: String, of what: String) throws -> String {
        if let problem = Validation.nameProblem(text, of: what) { throw ValidationError(problem) }
        return text
    }
}

extension Arguments {
    /// What a valid value of each option looks like, for usage errors.
    /// (Built from the core's limits, so the ranges are written once, in `Validation`.)
    static let expected: [String: String] = {
        let limit = "finite numbers within ±" + formatNumber(Validation.coordinateLimit)
        let magnet = Validation.magnetSideRange
        let board = Validation.boardSideRange
        let side = "a number from \(formatNumber(board.lowerBound)) to \(formatNumber(board.upperBound))"
        return [
            "to": "a point X,Y of \(limit)", "by": "an offset DX,DY of \(limit)", "from": "a point X,Y of \(limit)",
            "path": "\"X,Y X,Y …\": 1 to \(Validation.maxPathPoints) points of \(limit)",
            "rect":
                "X,Y,W,H: finite numbers, the corner within ±\(formatNumber(Validation.coordinateLimit)), width and height above 0",
            "size": "WxH, each side from \(formatNumber(magnet.lowerBound)) to \(formatNumber(magnet.upperBound))",
            "width": side, "height": side, "since": "a clock like alice=3,bob=2",
        ]
    }()

    /// argument-parser's "The value 'V' is invalid for '--to <to>'" with what was expected.
    static func explained(_ message: String) -> String {
        let message = shortened(message)
        guard message.hasPrefix("The value '"), let range = message.range(of: "' is invalid for '--") else {
            return message
        }
        let option = message[range.upperBound...].prefix { $0.isLetter || $0 == "-" }
        guard let expected = expected[String(option)], !message.contains("\n") else { return message }
        return message + ": expected " + expected
    }

    /// argument-parser's own messages quote what was typed whole ("The value 'V' is invalid for
    /// '--to <to>'", "Unexpected argument 'V'"): each quoted part longer than
    /// `Validation.quoteLimit` is cut as `Validation.quoted` cuts it; the rest is left as it is.
    static func shortened(_ message: String) -> String {
        let quoting = [
            "The value '", "Unexpected argument '", "The option '", "Unknown option '", "Missing value for '",
        ]
        guard quoting.contains(where: message.hasPrefix) || message.contains(" unexpected arguments: '") else {
            return message
        }
        return message.split(separator: "'", omittingEmptySubsequences: false)
            .map { $0.count > Validation.quoteLimit ? Validation.quoted($0) : String($0) }
            .joined(separator: "'")
    }
}

/// `X,Y`: a point, each coordinate finite and within ±1e6.
struct PointArgument: ExpressibleByArgument {
    var point: Point
    init?(argument: String) {
        guard let v = Arguments.numbers(argument, count: 2), Validation.pointProblem(Point(x: v[0], y: v[1])) == nil
        else { return nil }
        point = Point(x: v[0], y: v[1])
    }
    static var defaultValueDescription: String { "X,Y" }
}

/// `X,Y,W,H`: a rect's top-left corner and positive size.
struct RectArgument: ExpressibleByArgument {
    var rect: Rect
    init?(argument: String) {
        guard let v = Arguments.numbers(argument, count: 4),
            Validation.rectProblem(Rect(x: v[0], y: v[1], width: v[2], height: v[3])) == nil
        else { return nil }
        rect = Rect(x: v[0], y: v[1], width: v[2], height: v[3])
    }
}

/// `WxH`: a magnet size, each side 1…1000.
struct SizeArgument: ExpressibleByArgument {
    var size: Size
    init?(argument: String) {
        guard let v = Arguments.numbers(argument, count: 2, separator: "x"),
            Validation.magnetSizeProblem(Size(width: v[0], height: v[1])) == nil
        else { return nil }
        size = Size(width: v[0], height: v[1])
    }
    var defaultValueDescription: String { "\(formatNumber(size.width))x\(formatNumber(size.height))" }
}

/// `"X,Y X,Y …"`: a path of 1…10000 points.
struct PathArgument: ExpressibleByArgument {
    var points: [Point]
    init?(argument: String) {
        var points: [Point] = []
        for part in argument.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
            guard let v = Arguments.numbers(String(part), count: 2) else { return nil }
            points.append(Point(x: v[0], y: v[1]))
        }
        guard Validation.pathProblem(points) == nil else { return nil }
        self.points = points
    }
}

/// `alice=3,bob=2`: a version vector.
struct ClockArgument: ExpressibleByArgument {
    var clock: VectorClock
    init?(argument: String) {
        guard let clock = VectorClock(parsing: argument) else { return nil }
        self.clock = clock
    }
}

/// A board side: 1…100000.
struct SideArgument: ExpressibleByArgument {
    var value: Double
    init?(argument: String) {
        // One side of a board size: the core's rule for board sizes, asked with a square.
        guard let v = Arguments.number(Substring(argument)),
            Validation.boardSizeProblem(Size(width: v, height: v)) == nil
        else { return nil }
        value = v
    }
    var defaultValueDescription: String { formatNumber(value) }
}

/// `REPLICA:SEQ`: an op's id, as history shows it.
struct OpArgument: ExpressibleByArgument {
    var id: OpID
    init?(argument: String) {
        guard let id = OpID(argument) else { return nil }
        self.id = id
    }
    static var defaultValueDescription: String { "REPLICA:SEQ" }
}
