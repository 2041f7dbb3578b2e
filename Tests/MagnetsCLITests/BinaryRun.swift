import Foundation

/// Runs the built `magnets` binary as a user would, for the end-to-end tests of issue 17's files
/// (`HonestErrorsTests`, `NewcomerTests`): its own small helper, so those files stand alone.
struct BinaryRun: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String

    /// The first line on stderr.
    var firstErrorLine: String { stderr.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? "" }

    /// The `magnets` binary built beside the test bundle.
    static var binary: String {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("magnets").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return ".build/debug/magnets"
    }

    /// Runs `magnets ARGS` in `dir` with `environment` (plus PATH), feeding `input` on stdin.
    @discardableResult
    static func magnets(_ args: [String], in dir: String, environment: [String: String] = ["MAGNETS_USER": "tester"],
                        input: Data? = nil) -> BinaryRun {
        run(binary, args, in: dir, environment: environment, input: input)
    }

    /// Runs any program (`/bin/sh -c …` for pipelines).
    static func run(_ program: String, _ args: [String], in dir: String, environment: [String: String] = [:],
                    input: Data? = nil) -> BinaryRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = args
        process.currentDirectoryURL = URL(fileURLWithPath: dir)
        process.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a }
        // Stdout and stderr go to files: no pipe to drain (a command that fills one cannot block),
        // no read that a signal can interrupt.
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-run-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: base + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: base + ".err", contents: nil)
        defer { for suffix in [".out", ".err"] { try? FileManager.default.removeItem(atPath: base + suffix) } }
        guard let out = FileHandle(forWritingAtPath: base + ".out"), let err = FileHandle(forWritingAtPath: base + ".err") else {
            return BinaryRun(status: -1, stdout: "", stderr: "cannot make the output files")
        }
        let inPipe = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input == nil ? FileHandle.nullDevice : inPipe
        do { try process.run() } catch { return BinaryRun(status: -1, stdout: "", stderr: "\(error)") }
        if let input {
            let writer = inPipe.fileHandleForWriting
            try? writer.write(contentsOf: input)
            try? writer.close()
        }
        process.waitUntilExit()
        try? out.close()
        try? err.close()
        let o = FileManager.default.contents(atPath: base + ".out") ?? Data()
        let errData = FileManager.default.contents(atPath: base + ".err") ?? Data()
        return BinaryRun(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
    }

    /// The names in a folder.
    static func names(in dir: String) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [])
    }
}
