import Foundation
import MagnetsTestSupport
import Testing

/// Others' hands (SPEC §8) in real headless Chromium pages on one board, driven with real
/// pointer and key events: what one page holds and moves shows on the others, with its name,
/// before anything is recorded; release, Escape and tray pulls; who is here, and a page that
/// leaves. The server's `/show` is the judge of what was recorded.
@Suite("Page hands", .serialized, .enabled(if: Browser.available, Comment(rawValue: Browser.missing)), .blocking)
struct HandsPageTests: ScratchSuite {
    let scratch = ScratchFolder("magnets-hands")

    /// Board `fridge` as `PageTests` makes it (magnet A at 100,100, a wall from 300,0 to
    /// 300,200, a zone at 400,400 100×100), on a server; its magnet's id and the tokens.
    func board(
        _ server: (ScratchFolder) throws -> TestServer = { try TestServer($0) }
    ) throws -> (
        server: TestServer, magnet: String, rw: String, ro: String
    ) {
        must("init", "-b", "alice.magnets", "--replica", "alice", "--name", "fridge")
        must("tray", "add", "ABCDEFGH", "--count", "3", "-b", "alice.magnets")
        must("zone", "add", "slot", "--rect", "400,400,100,100", "-b", "alice.magnets")
        must("boundary", "add", "wall", "--from", "300,0", "--to", "300,200", "-b", "alice.magnets")
        must("pull", "A", "-b", "alice.magnets", "--to", "100,100")
        must("server", "add", "fridge", "--from", "alice.magnets", "--dir", "boards")
        let (rw, ro) = (serverToken("fridge"), serverToken("fridge", readOnly: true))
        let server = try server(scratch)
        let show = try server.get("/boards/fridge/show", token: rw).object
        let magnet = try #require((show["magnets"] as? [[String: Any]])?.first?["id"] as? String)
        return (server, magnet, rw, ro)
    }

    /// A page on `fridge` at `port`, drawn and live (events and the live connection), named.
    func page(_ driver: ChromeDriver, port: Int, token: String, author: String?) throws -> BoardPage {
        let page = BoardPage(session: try driver.session(width: 1280, height: 800))
        try page.session.open("http://127.0.0.1:\(port)/boards/fridge/#token=\(token)")
        try page.session.wait(
            for: "return document.querySelectorAll('#magnets .magnet').length > 0 && magnetsPage.me !== null",
            "the board drawn and the page joined")
        if let author {
            try page.session.type(author, into: "#name-input")
            try page.session.click("#name-form button")
            try page.session.wait(for: "return document.getElementById('name-form').hidden", "the name taken")
        }
        try page.session.wait(for: "return document.getElementById('link').textContent === 'live'", "events live")
        return page
    }

    /// Where page `page` shows magnet `id`, and whose hand it shows holding it ("" for none).
    func shown(_ page: BoardPage, _ id: String) throws -> (x: Double, y: Double, heldBy: String) {
        let v =
            try page.session.run(
                "const n = document.querySelector('[data-id=\"\(id)\"]'); return [Number(n.dataset.x), Number(n.dataset.y), n.dataset.heldBy || '']"
            ) as? [Any] ?? []
        return (v[0] as? Double ?? .nan, v[1] as? Double ?? .nan, v[2] as? String ?? "")
    }

    func waitShown(_ page: BoardPage, _ id: String, at p: (Double, Double), heldBy: String, _ what: String) throws {
        try page.session.wait(
            for:
                "const n = document.querySelector('[data-id=\"\(id)\"]'); return n && Math.abs(n.dataset.x - \(p.0)) < 2 && Math.abs(n.dataset.y - \(p.1)) < 2 && (n.dataset.heldBy || '') === '\(heldBy)'",
            timeout: 3, what)
    }

    func people(_ page: BoardPage) throws -> [String] {
        try page.session.run("return [...document.querySelectorAll('#people li')].map(li => li.textContent)")
            as? [String]
            ?? []
    }

    func ops(_ server: TestServer, _ token: String) throws -> Int {
        try server.get("/boards/fridge", token: token).object["ops"] as? Int ?? -1
    }

    @Test("while A holds a magnet and moves, B shows it at A's hand with A's name; A releases and B shows the outcome")
    func holdAndRelease() throws {
        let (server, a, rw, _) = try board()
        let driver = try ChromeDriver()
        let pageA = try page(driver, port: server.port, token: rw, author: "alice")
        let pageB = try page(driver, port: server.port, token: rw, author: "bob")
        let before = try ops(server, rw)
        let start = try pageA.viewport((100, 100))
        let first = try pageA.viewport((200, 450))
        try pageA.session.hold(stroke(start, first, steps: 10))
        try waitShown(pageB, a, at: (200, 450), heldBy: "alice", "B showing A's magnet under A's hand")
        #expect(
            try pageB.session.run("return document.querySelector('#hand-labels .hand-label').textContent") as? String
                == "alice")
        // Still held: it follows A's hand, and nothing is recorded.
        let second = try pageA.viewport((430, 430))
        try pageA.session.hold(stroke(first, second, steps: 10), press: false)
        try waitShown(pageB, a, at: (430, 430), heldBy: "alice", "B following A's hand")
        #expect(try ops(server, rw) == before)
        // Released inside the zone: the server captures it at the zone's center (not where the
        // hand let go), and B shows that.
        try pageA.session.letGo()
        try waitShown(pageB, a, at: (450, 450), heldBy: "", "B showing the server's outcome")
        let show = try server.get("/boards/fridge/show", token: rw).object
        let m = try #require((show["magnets"] as? [[String: Any]])?.first { $0["id"] as? String == a })
        #expect(m["zone"] as? String == "slot" && m["x"] as? Double == 450 && m["y"] as? Double == 450)
        #expect(try ops(server, rw) == before + 1)
        #expect(
            try pageB.session.run("return document.querySelectorAll('#hand-labels .hand-label').length") as? Int == 0)
    }

    @Test("A gives a drag up with Escape: B shows the magnet back where it was, and nothing is recorded")
    func escape() throws {
        let (server, a, rw, _) = try board()
        let driver = try ChromeDriver()
        let pageA = try page(driver, port: server.port, token: rw, author: "alice")
        let pageB = try page(driver, port: server.port, token: rw, author: "bob")
        let before = try ops(server, rw)
        try pageA.session.hold(stroke(try pageA.viewport((100, 100)), try pageA.viewport((600, 300)), steps: 12))
        try waitShown(pageB, a, at: (600, 300), heldBy: "alice", "B showing A's hand")
        try pageA.session.press(["\u{E00C}"])  // Escape
        try waitShown(pageB, a, at: (100, 100), heldBy: "", "B showing the magnet back")
        try waitShown(pageA, a, at: (100, 100), heldBy: "", "A showing the magnet back")
        try pageA.session.letGo()
        usleep(300_000)
        #expect(try ops(server, rw) == before)
        #expect(try shown(pageB, a).heldBy == "")
    }

    @Test("a tray pull A drags shows on B as it is dragged, then as the server made it")
    func trayPull() throws {
        let (server, _, rw, _) = try board()
        let driver = try ChromeDriver()
        let pageA = try page(driver, port: server.port, token: rw, author: "alice")
        let pageB = try page(driver, port: server.port, token: rw, author: "bob")
        let tile = try pageA.tileCenter(letter: "C", color: "red")
        let below = (tile.0, tile.1 + 120)
        let target = try pageA.viewport((700, 500))
        try pageA.session.hold(
            stroke(tile, below, steps: 8) + stroke(below, target, steps: 12).dropFirst(), touch: true)
        try pageB.session.wait(
            for:
                "const n = document.querySelector('#magnets .magnet.held'); return n && n.dataset.heldBy === 'alice' && n.querySelector('.letter').textContent === 'C' && Math.abs(n.dataset.x - 700) < 2 && Math.abs(n.dataset.y - 500) < 2",
            timeout: 3, "B showing the letter A pulls, under A's hand")
        let before = try ops(server, rw)
        try pageA.session.letGo()
        let deadline = Date().addingTimeInterval(3)
        while try ops(server, rw) == before, Date() < deadline { usleep(20_000) }
        #expect(try ops(server, rw) == before + 1, "A's pull recorded")
        // B shows the magnet the server made, where the server put it (its path ran through
        // the zone: captured at its center), and no hand any more.
        let show = try server.get("/boards/fridge/show", token: rw).object
        let pulled = try #require(
            (show["magnets"] as? [[String: Any]])?.first { ($0["id"] as? String)?.hasPrefix("server-") == true })
        let (id, x, y) = (pulled["id"] as? String ?? "", pulled["x"] as? Double ?? 0, pulled["y"] as? Double ?? 0)
        try waitShown(pageB, id, at: (x, y), heldBy: "", "B showing the pulled magnet as the server made it")
        try pageB.session.wait(
            for: "return document.querySelectorAll('#magnets .magnet').length === 2", timeout: 3, "no hand left on B")
        #expect(try pageB.session.run("return document.querySelectorAll('#magnets .magnet.held').length") as? Int == 0)
    }

    @Test("B lists A and a read-only viewer C; A leaves and is gone from B's list within 10 s")
    func presence() throws {
        let (server, _, rw, ro) = try board()
        let driver = try ChromeDriver()
        let pageA = try page(driver, port: server.port, token: rw, author: "alice")
        let pageB = try page(driver, port: server.port, token: rw, author: "bob")
        let pageC = try page(driver, port: server.port, token: ro, author: nil)
        try pageB.session.wait(
            for: "return document.querySelectorAll('#people li').length === 3", timeout: 3, "three on B's list")
        let listed = try people(pageB)
        #expect(listed.contains("alice") && listed.contains("bob (you)") && listed.contains { $0.hasPrefix("viewer") })
        #expect(
            try pageB.session.run("return document.querySelector('#people li[data-access=read]').textContent")
                as? String
                == "viewer 👁")
        _ = pageC
        let left = Date()
        try pageA.session.open("about:blank")
        try pageB.session.wait(
            for: "return ![...document.querySelectorAll('#people li')].some(li => li.textContent === 'alice')",
            timeout: 10, "alice gone from B's list")
        print("alice left B's list \(Date().timeIntervalSince(left)) s after her page went away")
        #expect(Date().timeIntervalSince(left) < 10)
        #expect(try people(pageB).count == 2)
    }
    @Test(
        "on PostgreSQL, A on one serve process and B on another: B sees A's hand and name, then the outcome",
        .enabled(if: PostgresCluster.installed, "PostgreSQL is not installed"))
    func acrossProcesses() throws {
        let cluster = try PostgresCluster()
        must("init", "-b", "alice.magnets", "--replica", "alice", "--name", "fridge")
        must("tray", "add", "ABC", "--count", "3", "-b", "alice.magnets")
        must("zone", "add", "slot", "--rect", "400,400,100,100", "-b", "alice.magnets")
        must("pull", "A", "-b", "alice.magnets", "--to", "100,100")
        must("server", "add", "fridge", "--from", "alice.magnets", "--postgres", cluster.url)
        let rw = must("server", "token", "fridge", "--postgres", cluster.url).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let one = try TestServer(scratch, postgres: cluster.url)
        let two = try TestServer(scratch, postgres: cluster.url)
        let show = try one.get("/boards/fridge/show", token: rw).object
        let a = try #require((show["magnets"] as? [[String: Any]])?.first?["id"] as? String)
        let driver = try ChromeDriver()
        let pageA = try page(driver, port: one.port, token: rw, author: "alice")
        let pageB = try page(driver, port: two.port, token: rw, author: "bob")
        // Each lists both, whichever process it is on.
        try pageB.session.wait(
            for: "return [...document.querySelectorAll('#people li')].some(li => li.textContent === 'alice')",
            timeout: 5, "B (process two) listing alice (process one)")
        let before = try ops(two, rw)
        try pageA.session.hold(stroke(try pageA.viewport((100, 100)), try pageA.viewport((250, 450)), steps: 10))
        try waitShown(pageB, a, at: (250, 450), heldBy: "alice", "B showing A's hand from the other process")
        try pageA.session.hold(
            stroke(try pageA.viewport((250, 450)), try pageA.viewport((430, 430)), steps: 8), press: false)
        try waitShown(pageB, a, at: (430, 430), heldBy: "alice", "B following A's hand")
        #expect(try ops(two, rw) == before)
        try pageA.session.letGo()
        try waitShown(pageB, a, at: (450, 450), heldBy: "", "B showing the outcome, from the other process")
        let after = try two.get("/boards/fridge/show", token: rw).object
        let m = try #require((after["magnets"] as? [[String: Any]])?.first { $0["id"] as? String == a })
        #expect(m["zone"] as? String == "slot")
        // A leaves: gone from B's list (on the other process) within 10 s.
        try pageA.session.open("about:blank")
        let left = Date()
        do {
            try pageB.session.wait(
                for: "return ![...document.querySelectorAll('#people li')].some(li => li.textContent === 'alice')",
                timeout: 10, "alice gone from B's list")
        } catch {
            print("B's list: \(try people(pageB)) after \(Date().timeIntervalSince(left)) s")
            throw error
        }
    }
}
