import Foundation

// Usage: embed-migrations OUTPUT.swift 0001_name.sql 0002_name.sql …
// Writes `enum EmbeddedMigrations { static let all: [(name: String, sql: String)] }`, in order.
//
// Usage: embed-migrations --page OUTPUT.swift index.html page.css page.js …
// Writes `enum EmbeddedPage { static let files: [String: String] }`, keyed by file name: the
// board page of SPEC §8, served by `magnets serve`.
var arguments = Array(CommandLine.arguments.dropFirst())
let page = arguments.first == "--page"
if page { arguments.removeFirst() }
guard let output = arguments.first else {
    FileHandle.standardError.write(Data("usage: embed-migrations [--page] OUTPUT FILE…\n".utf8))
    exit(64)
}

/// A Swift string literal for any text: raw, with enough `#` that no content can end it.
func literal(_ text: String) -> String {
    var hashes = "#"
    while text.contains("\"" + hashes) || text.contains("\\" + hashes) { hashes += "#" }
    return "\(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes)"
}

let inputs = arguments.dropFirst().sorted(by: {
    ($0 as NSString).lastPathComponent < ($1 as NSString).lastPathComponent
})
var swift: String
if page {
    swift = """
        // Generated at build time from Page/* by the EmbedPage plugin. Do not edit.

        /// The board page's files (SPEC §8), by file name.
        enum EmbeddedPage {
            static let files: [String: String] = [

        """
    for path in inputs {
        let name = (path as NSString).lastPathComponent
        let text = try String(contentsOfFile: path, encoding: .utf8)
        swift += "        \(literal(name)): \(literal(text)),\n"
    }
    if inputs.isEmpty { swift += "        :\n" }
    swift += "    ]\n}\n"
} else {
    swift = """
        // Generated at build time from Migrations/*.sql by the EmbedMigrations plugin. Do not edit.

        /// The schema migrations, in the order they are applied: each file of `Migrations/`.
        enum EmbeddedMigrations {
            static let all: [(name: String, sql: String)] = [

        """
    for path in inputs {
        let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        let sql = try String(contentsOfFile: path, encoding: .utf8)
        swift += "        (name: \(literal(name)), sql: \(literal(sql))),\n"
    }
    swift += "    ]\n}\n"
}
try swift.write(toFile: output, atomically: true, encoding: .utf8)
