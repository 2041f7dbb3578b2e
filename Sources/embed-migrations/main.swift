import Foundation

// Usage: embed-migrations OUTPUT.swift 0001_name.sql 0002_name.sql …
// Writes `enum EmbeddedMigrations { static let all: [(name: String, sql: String)] }`, in order.
let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first else {
    FileHandle.standardError.write(Data("usage: embed-migrations OUTPUT FILE.sql…\n".utf8))
    exit(64)
}

/// A Swift string literal for any text: raw, with enough `#` that no content can end it.
func literal(_ text: String) -> String {
    var hashes = "#"
    while text.contains("\"" + hashes) || text.contains("\\" + hashes) { hashes += "#" }
    return "\(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes)"
}

var swift = """
    // Generated at build time from Migrations/*.sql by the EmbedMigrations plugin. Do not edit.

    /// The schema migrations, in the order they are applied: each file of `Migrations/`.
    enum EmbeddedMigrations {
        static let all: [(name: String, sql: String)] = [

    """
for path in arguments.dropFirst().sorted(by: { ($0 as NSString).lastPathComponent < ($1 as NSString).lastPathComponent }
) {
    let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    let sql = try String(contentsOfFile: path, encoding: .utf8)
    swift += "        (name: \(literal(name)), sql: \(literal(sql))),\n"
}
swift += "    ]\n}\n"
try swift.write(toFile: output, atomically: true, encoding: .utf8)
