import Foundation

/// A fresh folder under the temporary directory for one test, removed with everything in it when
/// the test's suite instance lets it go (Swift Testing makes one per test).
final class ScratchFolder: Sendable {
    let path: String

    init(_ prefix: String) {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        // A file deleted meanwhile (a closing connection removes its log) stops one removal
        // part way: try again.
        for _ in 0..<3 where FileManager.default.fileExists(atPath: path) { try? FileManager.default.removeItem(atPath: path) }
    }
}
