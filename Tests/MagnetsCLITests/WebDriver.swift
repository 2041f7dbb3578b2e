import Foundation
import MagnetsTestSupport
import Testing

// A small WebDriver client (W3C WebDriver over HTTP, spoken to chromedriver on loopback) for the
// page's tests: a real headless Chromium, real input (the Actions API's pointer and key events),
// screenshots. Reading the page's state goes through the DOM (`execute`); input never calls into
// the page.

/// Debian's `chromium` and `chromium-driver`, when both are installed.
enum Browser {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let chromedriver = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static var available: Bool { chromium != nil && chromedriver != nil }
    static let missing =
        "chromium and chromedriver are not installed (apt-get install -y chromium chromium-driver): the page's browser tests are skipped"
}

/// A running chromedriver on a free loopback port, ended (SIGKILL) with the test; the browsers it starts
/// keep their profiles in a temporary folder removed with it.
final class ChromeDriver {
    let process = Process()
    let port: Int
    let temporary: URL

    init() throws {
        port = try freePort()
        temporary = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-chromium-\(UUID())")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: Browser.chromedriver!)
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": temporary.path]) { $1 }
        process.arguments = ["--port=\(port)", "--allowed-ips=127.0.0.1", "--log-level=OFF"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let reply = try? request("GET", "/status"), reply.status == 200 { return }
            usleep(50_000)
        }
        process.terminate()
        throw Failure("chromedriver did not start on port \(port)")
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: temporary)
    }

    /// A port nothing listens on now (the kernel's pick for a socket bound to port 0).
    func request(_ method: String, _ path: String, _ body: Any? = nil) throws -> Reply {
        let connection = try Connection(port: port, timeout: 60)
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        head += "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(data.count)\r\n\r\n"
        try connection.send(head)
        try connection.send(data)
        return try connection.readReply()
    }

    /// A new headless browser session with a window of `width`×`height` CSS pixels.
    func session(width: Int = 1280, height: Int = 800) throws -> BrowserSession {
        let arguments = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--window-size=\(width),\(height)", "--hide-scrollbars", "--force-device-scale-factor=1",
        ]
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": ["binary": Browser.chromium!, "args": arguments],
                ]
            ]
        ]
        let reply = try request("POST", "/session", capabilities)
        guard reply.status == 200, let value = reply.object["value"] as? [String: Any],
            let id = value["sessionId"] as? String
        else { throw Failure("no browser session: \(reply.text)") }
        let session = BrowserSession(driver: self, id: id)
        try session.resize(width: width, height: height)
        return session
    }
}

/// One browser window, driven as a person would.
final class BrowserSession {
    let driver: ChromeDriver
    let id: String

    init(driver: ChromeDriver, id: String) {
        self.driver = driver
        self.id = id
    }

    deinit { _ = try? driver.request("DELETE", "/session/\(id)") }

    @discardableResult
    func command(_ method: String, _ path: String, _ body: Any? = nil) throws -> Any? {
        let reply = try driver.request(method, "/session/\(id)\(path)", body)
        let value = reply.object["value"]
        guard reply.status == 200 else { throw Failure("WebDriver \(method) \(path) → \(reply.status): \(reply.text)") }
        return value
    }

    func open(_ url: String) throws { try command("POST", "/url", ["url": url]) }

    /// The viewport becomes `width`×`height` CSS pixels (the window is sized to make it so).
    func resize(width: Int, height: Int) throws {
        try command("POST", "/window/rect", ["width": width, "height": height])
        let inner = try run("return [window.innerWidth, window.innerHeight]") as? [Int] ?? [width, height]
        if inner != [width, height] {
            try command(
                "POST", "/window/rect", ["width": 2 * width - inner[0], "height": 2 * height - inner[1]])
        }
    }

    /// Runs a script that reads the page (never one that drives it) and returns its value.
    func run(_ script: String) throws -> Any? {
        try command("POST", "/execute/sync", ["script": script, "args": []])
    }

    func number(_ script: String) throws -> Double? { try run(script) as? Double }

    /// Waits (up to `timeout` seconds) until `script` returns true.
    func wait(
        for script: String, timeout: Double = 5, _ what: String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try run(script) as? Bool == true { return }
            usleep(20_000)
        }
        Issue.record("timed out waiting for \(what.isEmpty ? script : what)", sourceLocation: sourceLocation)
        throw Failure("timed out waiting for \(what.isEmpty ? script : what)")
    }

    func element(_ selector: String) throws -> String {
        let value = try command("POST", "/element", ["using": "css selector", "value": selector])
        guard let object = value as? [String: Any], let id = object.values.first as? String else {
            throw Failure("no element '\(selector)'")
        }
        return id
    }

    func type(_ text: String, into selector: String) throws {
        try command("POST", "/element/\(try element(selector))/value", ["text": text])
    }

    func click(_ selector: String) throws { try command("POST", "/element/\(try element(selector))/click", [:]) }

    /// A pointer gesture: down at the first point, through the others, up at the last (viewport
    /// CSS pixels), each move one pointer event.
    func gesture(_ points: [(Double, Double)], touch: Bool = false, stepMilliseconds: Int = 0) throws {
        var actions: [[String: Any]] = []
        func move(_ p: (Double, Double)) -> [String: Any] {
            ["type": "pointerMove", "x": Int(p.0.rounded()), "y": Int(p.1.rounded()), "duration": stepMilliseconds]
        }
        actions.append(move(points[0]))
        actions.append(["type": "pointerDown", "button": 0])
        for p in points.dropFirst() { actions.append(move(p)) }
        actions.append(["type": "pointerUp", "button": 0])
        try command(
            "POST", "/actions",
            [
                "actions": [
                    [
                        "type": "pointer", "id": touch ? "finger" : "mouse",
                        "parameters": ["pointerType": touch ? "touch" : "mouse"], "actions": actions,
                    ]
                ]
            ])
        try command("DELETE", "/actions")
    }

    /// Presses at the first point and moves through the others without letting go (the drag
    /// is under way until `letGo`, or a key given up); `press: false` moves a pointer already down.
    func hold(_ points: [(Double, Double)], touch: Bool = false, press: Bool = true, stepMilliseconds: Int = 20) throws
    {
        var actions: [[String: Any]] = []
        func move(_ p: (Double, Double)) -> [String: Any] {
            ["type": "pointerMove", "x": Int(p.0.rounded()), "y": Int(p.1.rounded()), "duration": stepMilliseconds]
        }
        if press {
            actions.append(move(points[0]))
            actions.append(["type": "pointerDown", "button": 0])
        }
        for p in press ? Array(points.dropFirst()) : points { actions.append(move(p)) }
        try command(
            "POST", "/actions",
            [
                "actions": [
                    [
                        "type": "pointer", "id": touch ? "finger" : "mouse",
                        "parameters": ["pointerType": touch ? "touch" : "mouse"], "actions": actions,
                    ]
                ]
            ])
    }

    /// Lets go of a pointer `hold` pressed.
    func letGo(touch: Bool = false) throws {
        try command(
            "POST", "/actions",
            [
                "actions": [
                    [
                        "type": "pointer", "id": touch ? "finger" : "mouse",
                        "parameters": ["pointerType": touch ? "touch" : "mouse"],
                        "actions": [["type": "pointerUp", "button": 0]],
                    ]
                ]
            ])
        try command("DELETE", "/actions")
    }

    /// Keys pressed and released in turn (WebDriver key values, e.g. "\u{E014}" for →).
    func press(_ keys: [String]) throws {
        let actions = keys.flatMap { [["type": "keyDown", "value": $0], ["type": "keyUp", "value": $0]] }
        try command("POST", "/actions", ["actions": [["type": "key", "id": "keyboard", "actions": actions]]])
    }

    /// The page as a PNG.
    func screenshot() throws -> Data {
        guard let text = try command("GET", "/screenshot") as? String, let data = Data(base64Encoded: text) else {
            throw Failure("no screenshot")
        }
        return data
    }
}

/// Points from `a` to `b`, `steps` of them after `a` (a straight line, as a hand moves).
func stroke(_ a: (Double, Double), _ b: (Double, Double), steps: Int) -> [(Double, Double)] {
    (0...steps).map { i in
        let t = Double(i) / Double(steps)
        return (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)
    }
}
