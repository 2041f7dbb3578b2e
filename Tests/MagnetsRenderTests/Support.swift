import Foundation
import MagnetsCore
import MagnetsRender
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

// MARK: - Boards

/// Builds a board by applying ops through the one road, `Board.apply(_:id:)`.
struct BoardBuilder {
    var board = Board()
    var replica: String
    var seq = 0

    init(name: String = "fridge", size: Size = Size(width: 1000, height: 700), replica: String = "alice") {
        self.replica = replica
        apply(.createBoard(name: name, size: size))
    }

    @discardableResult
    mutating func apply(_ payload: Payload, sourceLocation: SourceLocation = #_sourceLocation) -> Outcome {
        seq += 1
        let outcome = board.apply(payload, id: OpID(replica: replica, seq: seq))
        if outcome.isRejected {
            Issue.record("op \(payload.kind) rejected: \(outcome.events)", sourceLocation: sourceLocation)
        }
        return outcome
    }

    /// Pulls a letter straight to a point and returns the new magnet's id.
    @discardableResult
    mutating func pull(
        _ letter: String, _ color: String, x: Double, y: Double,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> MagnetID {
        apply(.pull(letter: letter, color: color, target: .point(Point(x: x, y: y))), sourceLocation: sourceLocation)
        return MagnetID(replica: replica, seq: seq)
    }

    mutating func stock(_ letter: String, _ color: String, count: Int? = 1, size: Size = .magnetDefault) {
        apply(.trayAdd(letter: letter, color: color, size: size, count: count))
    }
}

/// A board with a bit of everything: tiles (counted, unlimited, emoji), two zones (one that
/// accepts only red and blue), a floor and a slanted ramp, and four magnets, one captured.
func sampleBoard() -> Board {
    var b = BoardBuilder()
    b.stock("A", "red", count: 3)
    b.stock("B", "blue", count: nil)
    b.stock("🧲", "yellow", count: 1)
    b.stock("é", "green", count: 2)
    b.apply(.zoneAdd(Zone(name: "slot", rect: Rect(x: 400, y: 100, width: 60, height: 60))))
    b.apply(
        .zoneAdd(
            Zone(
                name: "shelf", rect: Rect(x: 600, y: 400, width: 300, height: 120), capacity: 3,
                accepts: ["red", "blue"])))
    b.apply(
        .boundaryAdd(Boundary(name: "floor", segment: Segment(from: Point(x: 0, y: 600), to: Point(x: 1000, y: 600)))))
    b.apply(
        .boundaryAdd(Boundary(name: "ramp", segment: Segment(from: Point(x: 100, y: 300), to: Point(x: 300, y: 500)))))
    b.pull("A", "red", x: 430, y: 130)  // captured by slot
    b.pull("B", "blue", x: 200, y: 200)
    b.pull("🧲", "yellow", x: 700, y: 300)
    b.pull("é", "green", x: 520, y: 520)
    return b.board
}

// MARK: - XML

/// A parsed XML document, flattened: every element with its attributes and all the text inside
/// it (its descendants' text included).
final class ParsedXML: NSObject, XMLParserDelegate {
    struct Element {
        var name: String
        var attributes: [String: String]
        var text: String
    }

    private(set) var elements: [Element] = []
    private var open: [Int] = []
    private(set) var failure: String?

    /// Parses `text`, or returns `nil` (recording why) when it is not well-formed XML.
    static func parse(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> ParsedXML? {
        let document = ParsedXML()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = document
        let ok = parser.parse()
        guard ok, document.failure == nil else {
            Issue.record(
                "not well-formed XML: \(document.failure ?? parser.parserError.map { "\($0)" } ?? "?")",
                sourceLocation: sourceLocation)
            return nil
        }
        return document
    }

    func elements(named name: String, class className: String? = nil) -> [Element] {
        elements.filter { $0.name == name && (className == nil || $0.attributes["class"] == className) }
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
    ) {
        elements.append(Element(name: elementName, attributes: attributeDict, text: ""))
        open.append(elements.count - 1)
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
        qualifiedName qName: String?
    ) {
        open.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        for i in open { elements[i].text += string }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        failure = "\(parseError)"
    }
}

// MARK: - Terminal text

/// A line of the terminal picture as display columns: a wide glyph fills its first column and
/// leaves `""` in the second.
func displayColumns(_ line: String) -> [String] {
    var columns: [String] = []
    for character in line {
        let text = String(character)
        let width = TerminalPicture.displayWidth(text)
        guard width > 0 else { continue }
        columns.append(text)
        if width == 2 { columns.append("") }
    }
    return columns
}
