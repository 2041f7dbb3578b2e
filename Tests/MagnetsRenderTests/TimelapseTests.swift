import Foundation
import MagnetsCore
import MagnetsRender
import Testing

@Suite("Timelapse page")
struct TimelapseTests {
    @Test("a page shows at most the last maximumFrames ops of a replay")
    func shownOps() {
        let most = Timelapse.maximumFrames
        #expect(Timelapse.shownOps(of: 0) == nil)
        #expect(Timelapse.shownOps(of: 1) == 1...1)
        #expect(Timelapse.shownOps(of: most) == 1...most)
        #expect(Timelapse.shownOps(of: most + 1) == 2...(most + 1))
        #expect(Timelapse.shownOps(of: 50_533) == (50_534 - most)...50_533)
    }

    /// The board after each op of a short session, with a caption per op.
    func frames(lastCaption: String? = nil) -> [Timelapse.Frame] {
        var b = BoardBuilder(name: "fridge")
        var frames = [Timelapse.Frame(board: b.board, caption: "alice:1 board.create fridge 1000x700")]
        b.stock("A", "red", count: 2)
        frames.append(Timelapse.Frame(board: b.board, caption: "alice:2 tray.add A red"))
        b.apply(.zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60))))
        frames.append(Timelapse.Frame(board: b.board, caption: "alice:3 zone.add slot"))
        // A second zone of that name: refused, the board as it was.
        frames.append(
            Timelapse.Frame(board: b.board, caption: "bob:1 zone.add slot — rejected: zone name taken", rejected: true))
        let a = b.pull("A", "red", x: 200, y: 200)
        frames.append(Timelapse.Frame(board: b.board, caption: "alice:4 magnet.pull A → 200,200"))
        b.apply(.move(magnet: a, target: .point(Point(x: 430, y: 130))))
        frames.append(
            Timelapse.Frame(
                board: b.board,
                caption: lastCaption ?? "alice:5 magnet.move alice-4 → 430,130 — captured by zone 'slot'"))
        return frames
    }

    /// The frames' JSON as the page embeds it, decoded.
    func embeddedFrames(_ html: String) throws -> [[String: Any]] {
        let open = "<script type=\"application/json\" id=\"magnets-frames\">"
        let start = try #require(html.range(of: open))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        let json = Data(html[start.upperBound..<end.lowerBound].utf8)
        return try #require(try JSONSerialization.jsonObject(with: json) as? [[String: Any]])
    }

    @Test("embeds every frame's picture and caption, with a slider and play/pause")
    func page() throws {
        let frames = frames()
        let html = Timelapse.render(title: "fridge — 6 ops", frames: frames)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<title>fridge — 6 ops</title>"))
        let embedded = try embeddedFrames(html)
        #expect(embedded.count == 6)
        #expect(embedded.map { $0["caption"] as? String } == frames.map(\.caption))
        #expect(embedded.map { $0["rejected"] as? Bool } == frames.map(\.rejected))
        for (frame, item) in zip(frames, embedded) {
            let svg = try #require(item["svg"] as? String)
            let xml = try #require(ParsedXML.parse(svg))
            #expect(xml.elements(named: "rect", class: "magnet").count == frame.board.magnets.count)
        }
        #expect(html.contains("<input id=\"scrub\" type=\"range\" min=\"0\" max=\"5\" step=\"1\" value=\"5\""))
        #expect(html.contains("<button id=\"play\""))
        // Without scripts, the last frame and its caption are shown.
        #expect(
            html.contains(
                "<p id=\"caption\">alice:5 magnet.move alice-4 → 430,130 — captured by zone &#39;slot&#39;</p>"))
        #expect(html.components(separatedBy: "<svg ").count == 2)
    }

    @Test("is self-contained: nothing is fetched")
    func offline() {
        let html = Timelapse.render(title: "t", frames: frames())
        for needle in ["src=", "href=", "<link", "@import", "fetch(", "XMLHttpRequest", "//cdn", "https:"] {
            #expect(!html.contains(needle), "\(needle)")
        }
    }

    @Test("a caption with </script> or markup cannot break the page")
    func hostileCaption() throws {
        let evil = "</script><script>alert(1)</script><!-- & \u{2028} \"'"
        let html = Timelapse.render(title: "<b>&\"board\"</b>", frames: frames(lastCaption: evil))
        // Only the page's own two scripts end.
        #expect(html.lowercased().components(separatedBy: "</script").count == 3)
        #expect(!html.contains("<script>alert"))
        #expect(!html.contains("<b>"))
        #expect(html.contains("<title>&lt;b&gt;&amp;&quot;board&quot;&lt;/b&gt;</title>"))
        let embedded = try embeddedFrames(html)
        #expect(embedded.count == 6)
        #expect(embedded.last?["caption"] as? String == evil)
    }

    @Test("a page with no frames still renders")
    func noFrames() {
        let html = Timelapse.render(title: "empty", frames: [])
        #expect(html.contains("No frames to show."))
        #expect(html.contains("<script type=\"application/json\" id=\"magnets-frames\">[]</script>"))
        #expect(html.contains("max=\"0\""))
    }
}
