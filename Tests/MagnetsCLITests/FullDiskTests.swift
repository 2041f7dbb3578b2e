import Foundation
import Testing

/// `magnets serve` with its folder on a small tmpfs that fills up: boards it had not opened yet
/// are still read (as `magnets show` reads them), writes are refused meanwhile, and once there
/// is room again the board takes writes. Needs root (to mount); skipped otherwise.
@Suite("A server on a full disk", .enabled(if: Tmpfs.canMount, "mounting a tmpfs needs root"), .blocking)
struct FullDiskTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-full-disk")

    @Test(
        "GET of a board the server had not opened yet answers on a full disk: the board, show, history and ops; a write is refused, and taken once there is room"
    )
    func readsOnAFullDisk() throws {
        let boards = scratch.file("boards")
        try FileManager.default.createDirectory(atPath: boards, withIntermediateDirectories: true)
        try #require(scratch.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", boards]).status == 0)
        defer { scratch.run("/bin/umount", ["-l", boards]) }

        must("init", "-b", "alice.magnets", "--replica", "alice")
        must("tray", "add", "ABCD", "--unlimited", "-b", "alice.magnets")
        must("pull", "A", "-b", "alice.magnets", "--to", "100,100")
        must("server", "add", "fridge", "--from", "alice.magnets", "--dir", "boards")
        must("server", "add", "door", "--from", "alice.magnets", "--dir", "boards")
        let (fridge, door) = (serverToken("fridge"), serverToken("door"))
        let server = try TestServer(scratch)
        #expect(try server.get("/boards/fridge", token: fridge).status == 200)

        // The disk fills up (dd stops at "No space left on device").
        scratch.run("/bin/dd", ["if=/dev/zero", "of=\(boards)/filler", "bs=65536"])
        var room = statvfs()
        #expect(statvfs(boards, &room) == 0 && room.f_bavail == 0, "\(room.f_bavail) blocks left")

        for path in ["", "/show", "/history", "/ops"] {
            let reply = try server.get("/boards/door" + path, token: door)
            #expect(reply.status == 200, "GET /boards/door\(path): \(reply.status) \(reply.text.prefix(200))")
        }
        let opsBefore = try #require(try server.get("/boards/door", token: door).object["ops"] as? Int)
        let shown = must("show", "--json", "-b", "boards/door.magnets").stdout
        #expect(
            try withoutReplica(try server.get("/boards/door/show", token: door).body)
                == withoutReplica(Data(shown.utf8)))
        #expect(try server.get("/boards/fridge/show", token: fridge).status == 200)

        let move = #"{"kind": "pull", "author": "page", "letter": "B", "to": [300, 300]}"#
        let refused = try server.post("/boards/door/commands", token: door, json: move)
        #expect(refused.status != 200 && !refused.error.isEmpty, "\(refused.status) \(refused.text)")

        // Room again: the board is opened for writing at its next request.
        try FileManager.default.removeItem(atPath: boards + "/filler")
        let taken = try server.post("/boards/door/commands", token: door, json: move)
        #expect(taken.status == 200, "\(taken.status) \(taken.text)")
        let described = try server.get("/boards/door", token: door)
        #expect(described.object["ops"] as? Int == opsBefore + 1, "\(described.status) \(described.text)")
    }
}

enum Tmpfs {
    /// Whether this process may mount a tmpfs (tried once).
    static let canMount: Bool = {
        let folder = ScratchFolder("magnets-mount-probe")
        let mounted = folder.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", folder.path]).status == 0
        if mounted { folder.run("/bin/umount", [folder.path]) }
        return mounted
    }()
}
