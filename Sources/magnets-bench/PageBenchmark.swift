import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `magnets-bench page [N]`: issue 21's figure. Two headless Chromium pages on one board of a
/// real `magnets serve --open` on loopback; page A drags a magnet (real WebDriver pointer
/// events), page B shows it. The latency of one drag is the time from A's pointer release to B
/// drawing the magnet at its new place: A stamps `Date.now()` in a capture listener for
/// `pointerup`, B in a MutationObserver on the magnet's `transform`. Both pages are browsers on
/// this machine, so `Date.now()` is one clock (the system's). Needs Debian's `chromium` and
/// `chromium-driver`.
enum PageBenchmark {
    static func run(drags: Int = 200) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
        else {
            throw BenchError(
                "page needs /usr/bin/chromium and /usr/bin/chromedriver (apt-get install chromium chromium-driver)")
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-bench-page-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch + "/boards", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let file = scratch + "/a.magnets"
        for args in [
            ["init", "-b", file, "--replica", "alice", "--name", "bench"],
            ["tray", "add", "M", "-b", file],
            ["pull", "M", "-b", file, "--to", "300,350"],
            ["server", "add", "bench", "--from", file, "--dir", scratch + "/boards"],
        ] {
            let run = try Measure.output(Measure.magnetsBinary, args)
            guard run.status == 0 else { throw BenchError("magnets \(args[0]) failed: \(run.text)") }
        }
        let server = try ServerBenchmark.Served(folder: scratch + "/boards")
        defer { server.stop() }
        let driver = try Driver()
        defer { driver.stop() }
        let url = server.url + "/boards/bench/"
        let a = try driver.page(url, author: "a")
        let b = try driver.page(url, author: "b")
        defer {
            a.close()
            b.close()
        }
        let id = try a.script("return document.querySelector('#magnets .magnet').dataset.id") as? String ?? ""
        // A's release, stamped as it is dispatched.
        _ = try a.script(
            "document.addEventListener('pointerup', () => { window.benchUp = Date.now(); }, true); return true")

        var latencies: [Double] = []
        var x = 300.0
        for i in 0..<drags {
            let target = x == 300 ? 700.0 : 300.0
            _ = try b.script(
                """
                window.benchSeen = 0;
                const node = document.querySelector('[data-id="\(id)"]');
                if (window.benchObserver) window.benchObserver.disconnect();
                window.benchObserver = new MutationObserver(() => {
                  if (!window.benchSeen && Math.abs(node.dataset.x - \(target)) < 3) window.benchSeen = Date.now();
                });
                window.benchObserver.observe(node, { attributes: true, attributeFilter: ['transform'] });
                return true
                """)
            let box =
                try a.script(
                    "const r = document.getElementById('board').getBoundingClientRect(); const b = magnetsPage.board.board; return [r.left, r.top, r.width / b.width]"
                ) as? [Double] ?? [0, 0, 1]
            func px(_ bx: Double, _ by: Double) -> (Int, Int) {
                (Int((box[0] + bx * box[2]).rounded()), Int((box[1] + by * box[2]).rounded()))
            }
            // Grabbed at its center, dragged in 5 steps, released exactly over the target.
            let steps = (0...5).map { px(x + (target - x) * Double($0) / 5, 350) }
            try a.drag(steps)
            let deadline = Date().addingTimeInterval(5)
            var seen = 0.0
            var up = 0.0
            while Date() < deadline {
                let pair = try b.script("return window.benchSeen") as? Double ?? 0
                if pair > 0 {
                    seen = pair
                    up = try a.script("return window.benchUp") as? Double ?? 0
                    break
                }
                usleep(2_000)
            }
            guard seen > 0 else { throw BenchError("drag \(i): page B did not show it within 5 s") }
            latencies.append(seen - up)
            // A's own answer in before the next drag.
            let settle = Date().addingTimeInterval(5)
            while Date() < settle,
                try a.script("return document.querySelector('[data-id=\"\(id)\"]').classList.contains('pending')")
                    as? Bool == true
            {
                usleep(2_000)
            }
            x = target
        }
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            sorted[min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)]
        }
        print("page: release on page A → change drawn on page B, \(drags) drags, two headless Chromium pages, loopback")
        print(
            String(
                format: "  p50 %.0f ms | p90 %.0f ms | p99 %.0f ms | max %.0f ms (targets: p50 ≤ 50 ms, p99 ≤ 150 ms)",
                percentile(0.5), percentile(0.9), percentile(0.99), sorted.last ?? .nan))
    }

    // MARK: - A minimal WebDriver client (chromedriver on loopback)

    final class Driver {
        let process = Process()
        let port: Int

        init() throws {
            port = 9515 + Int(getpid() % 1000)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/chromedriver")
            process.arguments = ["--port=\(port)", "--log-level=OFF"]
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if (try? request("GET", "/status")) != nil { return }
                usleep(50_000)
            }
            throw BenchError("chromedriver did not start")
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }

        /// One WebDriver call: its `value`.
        func request(_ method: String, _ path: String, _ body: Any? = nil) throws -> Any? {
            let data = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else { throw BenchError("cannot reach chromedriver") }
            let head =
                "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(data.count)\r\n\r\n"
            let message = Data(head.utf8) + data
            _ = message.withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            // The reply: its head, then Content-Length bytes (chromedriver may keep the connection).
            var reply = Data()
            var chunk = [UInt8](repeating: 0, count: 65536)
            var split: Range<Data.Index>?
            while true {
                if let head = split ?? reply.range(of: Data("\r\n\r\n".utf8)) {
                    split = head
                    let text = String(decoding: reply[..<head.lowerBound], as: UTF8.self).lowercased()
                    let length = text.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
                    if let length, reply.count - head.upperBound >= length { break }
                }
                let n = recv(fd, &chunk, chunk.count, 0)
                if n <= 0 { break }
                reply.append(contentsOf: chunk[0..<n])
            }
            guard let split else { throw BenchError("no reply from chromedriver") }
            let status = String(decoding: reply[..<split.lowerBound], as: UTF8.self).split(separator: " ").dropFirst()
                .first
            let object = try JSONSerialization.jsonObject(with: reply[split.upperBound...]) as? [String: Any]
            guard status == "200" else { throw BenchError("WebDriver \(method) \(path): \(object ?? [:])") }
            return object?["value"]
        }

        func page(_ url: String, author: String) throws -> Page {
            let options: [String: Any] = [
                "binary": "/usr/bin/chromium",
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1280,800",
                ],
            ]
            let value =
                try request(
                    "POST", "/session",
                    ["capabilities": ["alwaysMatch": ["browserName": "chrome", "goog:chromeOptions": options]]])
                as? [String: Any]
            guard let id = value?["sessionId"] as? String else { throw BenchError("no browser session") }
            let page = Page(driver: self, id: id)
            _ = try page.call("POST", "/url", ["url": url])
            try page.until("return document.querySelectorAll('#magnets .magnet').length > 0")
            let input = try page.call("POST", "/element", ["using": "css selector", "value": "#name-input"])
            let element = (input as? [String: Any])?.values.first as? String ?? ""
            _ = try page.call("POST", "/element/\(element)/value", ["text": author + "\n"])
            try page.until("return document.getElementById('name-form').hidden")
            try page.until("return document.getElementById('link').textContent === 'live'")
            return page
        }
    }

    struct Page {
        let driver: Driver
        let id: String

        func call(_ method: String, _ path: String, _ body: Any? = nil) throws -> Any? {
            try driver.request(method, "/session/\(id)\(path)", body)
        }

        func script(_ source: String) throws -> Any? {
            try call("POST", "/execute/sync", ["script": source, "args": []])
        }

        func until(_ source: String) throws {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if try script(source) as? Bool == true { return }
                usleep(20_000)
            }
            throw BenchError("timed out: \(source)")
        }

        /// A mouse drag through viewport points (down at the first, up at the last).
        func drag(_ points: [(Int, Int)]) throws {
            var actions: [[String: Any]] = [["type": "pointerMove", "x": points[0].0, "y": points[0].1, "duration": 0]]
            actions.append(["type": "pointerDown", "button": 0])
            for p in points.dropFirst() { actions.append(["type": "pointerMove", "x": p.0, "y": p.1, "duration": 0]) }
            actions.append(["type": "pointerUp", "button": 0])
            _ = try call(
                "POST", "/actions",
                [
                    "actions": [
                        ["type": "pointer", "id": "mouse", "parameters": ["pointerType": "mouse"], "actions": actions]
                    ]
                ])
        }

        func close() { _ = try? call("DELETE", "") }
    }
}
