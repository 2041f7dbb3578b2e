import MagnetsStore
import Testing

@Suite("CSV fields")
struct CSVFieldTests {
    @Test("a field is quoted only when it holds a comma, quote or line break (CRLF too), quotes inside doubled")
    func quoting() {
        #expect(HistoryFormat.csvField("alice:3") == "alice:3")
        #expect(HistoryFormat.csvField("") == "")
        #expect(HistoryFormat.csvField("alice=3,bob=2") == "\"alice=3,bob=2\"")
        #expect(HistoryFormat.csvField(#"{"kind":"x"}"#) == #""{""kind"":""x""}""#)
        #expect(HistoryFormat.csvField("two\nlines") == "\"two\nlines\"")
        #expect(HistoryFormat.csvField("two\r\nlines") == "\"two\r\nlines\"")
        #expect(HistoryFormat.csvField("zone 'é' → 430,130") == "\"zone 'é' → 430,130\"")
    }
}
