import Foundation
import Hummingbird
import HummingbirdTesting
import MagnetsCore
import MagnetsStore
import Testing

@testable import MagnetsServer

/// The HTTP API of SPEC §7, in-process against a folder of board files: who may do what and in
/// which order the checks come, what each route answers, and that a refused request changes
/// nothing. (What needs a process — signals, kills, the CLI — is in MagnetsCLITests.)
@Suite("Server routes, in-process")
struct RouteTests {
    @Test("checks come in order: 401 without or with an unknown token, 403 for another board's token, then 404")
    func authorisationOrder() async throws {
        let folder = try ServedFolder()
        defer { folder.remove() }
        try await folder.application().test(.router) { client in
            let none = try await client.send("/boards/fridge")
            #expect(none.status == .unauthorized)
            #expect(none.error == "this board needs a token: send 'Authorization: Bearer TOKEN'")
            #expect(try await client.send("/boards/fridge", token: "not-a-token").status == .unauthorized)
            // Another board's token: 403, whether or not the board exists (a token never tells
            // of other boards).
            #expect(try await client.send("/boards/fridge", token: folder.otherToken).status == .forbidden)
            #expect(try await client.send("/boards/nothing", token: folder.otherToken).status == .forbidden)
            let fine = try await client.send("/boards/fridge", token: folder.token)
            #expect(fine.status == .ok)
            #expect(fine.json?["name"]?.stringValue == "fridge")
            #expect(fine.json?["ops"]?.intValue == 2)
            #expect(fine.json?["clock"]?["server"]?.intValue == 2)
        }
    }

    @Test("with --open an unknown board is 404 and a known one needs no token")
    func openServer() async throws {
        let folder = try ServedFolder()
        defer { folder.remove() }
        try await folder.application(open: true).test(.router) { client in
            let missing = try await client.send("/boards/nothing")
            #expect(missing.status == .notFound)
            #expect(missing.error != nil)
            #expect(try await client.send("/boards/fridge/show").status == .ok)
        }
    }

    @Test("a command is recorded by the server's replica with the page's author; a refused one records nothing")
    func commands() async throws {
        let folder = try ServedFolder()
        defer { folder.remove() }
        try await folder.application().test(.router) { client in
            let pull = try await client.send(
                "/boards/fridge/commands", .post, token: folder.token,
                body: #"{"kind": "pull", "author": "ada", "letter": "A", "to": [100, 120]}"#)
            #expect(pull.status == .ok)
            #expect(pull.json?["op"]?.stringValue == "server:3")
            let last = try await client.send("/boards/fridge/history?format=ndjson", token: folder.token)
                .text.split(separator: "\n").last.map { try JSONParser.parse($0) }
            #expect(last?["op"]?.stringValue == "server:3")
            #expect(last?["author"]?.stringValue == "ada")
            #expect(try folder.opCount("fridge") == 3)

            let badColor = try await client.send(
                "/boards/fridge/commands", .post, token: folder.token,
                body: #"{"kind": "pull", "author": "ada", "letter": "A", "color": "Red", "to": [1, 1]}"#)
            #expect(badColor.status == .unprocessableContent)
            #expect(badColor.error == Validation.colorProblem("Red"))
            let badAuthor = try await client.send(
                "/boards/fridge/commands", .post, token: folder.token,
                body: #"{"kind": "pull", "author": "", "letter": "A", "to": [1, 1]}"#)
            #expect(badAuthor.status == .unprocessableContent)
            #expect(badAuthor.error == Validation.authorProblem(""))
            let notJSON = try await client.send(
                "/boards/fridge/commands", .post, token: folder.token, body: "{not json")
            #expect(notJSON.status == .badRequest)
            let readOnly = try await client.send(
                "/boards/fridge/commands", .post, token: folder.readOnly,
                body: #"{"kind": "pull", "author": "ada", "letter": "A", "to": [1, 1]}"#)
            #expect(readOnly.status == .forbidden)
            #expect(try folder.opCount("fridge") == 3)
            #expect(try folder.opCount("other") == 2)
        }
    }

    @Test("a malformed or foreign bundle is refused with 400 and nothing changes")
    func refusedBundles() async throws {
        let folder = try ServedFolder()
        defer { folder.remove() }
        let otherFile = try BoardFile.open(folder.path(of: "other"), for: .reading)
        let exported = FileManager.default.temporaryDirectory.path + "/other-" + UUID().uuidString + ".bundle"
        _ = try otherFile.exportOps(to: exported)
        try otherFile.close()
        let foreign = try Data(contentsOf: URL(fileURLWithPath: exported))
        try? FileManager.default.removeItem(atPath: exported)
        try await folder.application().test(.router) { client in
            let garbage = try await client.send("/boards/fridge/ops", .post, token: folder.token, body: "hello\n")
            #expect(garbage.status == .badRequest)
            let other = try await client.send(
                "/boards/fridge/ops", .post, token: folder.token, body: String(decoding: foreign, as: UTF8.self))
            #expect(other.status == .badRequest)
            #expect(try folder.opCount("fridge") == 2)
        }
    }

    @Test("the board's answers: show, history in each format, ops since a clock; bad parameters are 400")
    func reads() async throws {
        let folder = try ServedFolder()
        defer { folder.remove() }
        try await folder.application().test(.router) { client in
            let show = try await client.send("/boards/fridge/show", token: folder.readOnly)
            #expect(show.status == .ok)
            #expect(show.json?["tray"]?.arrayValue?.count == 1)
            let history = try await client.send("/boards/fridge/history?format=ndjson", token: folder.readOnly)
            #expect(history.text.split(separator: "\n").count == 2)
            let csv = try await client.send("/boards/fridge/history?format=csv&limit=1", token: folder.readOnly)
            #expect(csv.text.split(separator: "\n").count == 2)  // the header and one op
            #expect(try await client.send("/boards/fridge/history?limit=x", token: folder.token).status == .badRequest)
            #expect(
                try await client.send("/boards/fridge/history?format=xml", token: folder.token).status == .badRequest)
            #expect(try await client.send("/boards/fridge/ops?since=%%%", token: folder.token).status == .badRequest)
            let none = try await client.send("/boards/fridge/ops?since=server%3D2", token: folder.token)
            #expect(none.status == .ok)
            #expect(none.text.split(separator: "\n").count == 1)  // the header alone
        }
    }

    @Test("an unknown path is 404, a wrong method 405 with Allow, each a JSON sentence")
    func routeErrors() async throws {
        let folder = try ServedFolder()
        defer { folder.remove() }
        try await folder.application().test(.router) { client in
            let unknown = try await client.send("/nowhere")
            #expect(unknown.status == .notFound)
            #expect(unknown.error != nil)
            let wrong = try await client.send("/boards/fridge/show", .post, token: folder.token, body: "{}")
            #expect(wrong.status == .methodNotAllowed)
            #expect(wrong.headers[.allow]?.contains("GET") == true)
            #expect(wrong.error != nil)
        }
    }
}
