import Foundation
import MagnetsCore

/// Issue 20's figures: the words (SPEC §10) of a 500-magnet and of a 10,000-magnet board, in
/// process (targets ≤ 1 ms and ≤ 20 ms), against an all-pairs version measured in the same run
/// — the reference, which must find the very same words — to show the growth (n log n vs n²).
enum WordsBenchmark {
    static func run() {
        print("words: SPEC §10 in process, Board.words (a sort and a sweep) against all pairs (the reference)")
        var sweeps: [(n: Int, seconds: Double, reference: Double)] = []
        for (count, size, target, runs, referenceRuns) in [
            (500, Size(width: 2000, height: 1400), 1.0, 41, 5),
            (10_000, Size(width: 9000, height: 6300), 20.0, 21, 3),
        ] {
            let board = self.board(magnets: count, size: size, seed: UInt64(count))
            var words: [Word] = []
            var reference: [Word] = []
            var times: [Double] = []
            var referenceTimes: [Double] = []
            // Interleaved, so that both see the machine alike.
            for run in 0..<runs {
                var start = DispatchTime.now().uptimeNanoseconds
                words = board.words
                times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                guard run % (runs / referenceRuns) == 0, referenceTimes.count < referenceRuns else { continue }
                start = DispatchTime.now().uptimeNanoseconds
                reference = allPairs(Array(board.magnets.values))
                referenceTimes.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
            guard words == reference else {
                fatalError(
                    "words: the sweep and all pairs disagree on \(count) magnets (\(words.count) vs \(reference.count) words)"
                )
            }
            let sweep = Measure.median(times)
            let pairs = Measure.median(referenceTimes)
            sweeps.append((count, sweep, pairs))
            let planted = Set(plantedWords)
            let real = words.filter { planted.contains($0.text) }.count
            print(
                String(
                    format: "  %6d magnets on %@: %d words (%d of them planted words), the same from both",
                    count, size.description, words.count, real))
            print(
                String(
                    format:
                        "    sweep %.3f ms (median of %d; target ≤ %.0f ms) · all pairs %.1f ms (median of %d) · all pairs / sweep %.0f×",
                    sweep * 1000, runs, target, pairs * 1000, referenceRuns, pairs / sweep))
        }
        if sweeps.count == 2 {
            let n = Double(sweeps[1].n) / Double(sweeps[0].n)
            print(
                String(
                    format:
                        "  growth 500 → 10,000 magnets (n ×%.0f): sweep ×%.0f, all pairs ×%.0f (n log n: ×%.0f, n²: ×%.0f)",
                    n, sweeps[1].seconds / sweeps[0].seconds, sweeps[1].reference / sweeps[0].reference,
                    n * log2(Double(sweeps[1].n)) / log2(Double(sweeps[0].n)), n * n))
        }
    }

    static let plantedWords = [
        "HELLO", "FRIDGE", "MAGNET", "WORD", "SYNC", "SWIFT", "BOARD", "LETTER", "TRAY", "ZONE",
        "MERGE", "CLOCK", "OFFLINE", "REPLICA", "KITCHEN", "MILK", "EGGS", "BREAD", "LOVE", "HOME",
    ]

    /// A board of `magnets` letters (40 × 50, some 30 × 40): about two thirds spell words from
    /// ``plantedWords`` laid along rows, a little crooked; the rest are strewn at random over it
    /// (and break a few words).
    static func board(magnets count: Int, size: Size, seed: UInt64) -> Board {
        var rng = SeededRandom(seed: seed)
        var magnets: [Magnet] = []
        let replicas = ["alice", "bob", "carol"]
        func add(_ letter: String, _ center: Point, _ side: Size) {
            let seq = magnets.count + 1
            magnets.append(
                Magnet(
                    id: MagnetID(replica: replicas[seq % 3], seq: seq), letter: letter, color: "red",
                    size: side, center: center, z: seq))
        }
        let planted = count * 2 / 3
        var y = 40.0
        var x = 30.0
        while magnets.count < planted {
            let word = plantedWords.randomElement(using: &rng)!
            let side = Int.random(in: 0..<4, using: &rng) == 0 ? Size(width: 30, height: 40) : Size.magnetDefault
            let pitch = side.width + Double.random(in: 2...8, using: &rng)
            if x + Double(word.count) * pitch > size.width - 30 {
                x = 30
                y += 80
                if y > size.height - 40 { y = 40 + Double.random(in: 0...30, using: &rng) }
            }
            for letter in word where magnets.count < planted {
                add(String(letter), Point(x: x, y: y + Double.random(in: -6...6, using: &rng)), side)
                x += pitch
            }
            x += 90 + Double.random(in: 0...60, using: &rng)
        }
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ").map(String.init)
        while magnets.count < count {
            let center = Point(
                x: Double.random(in: 20...(size.width - 20), using: &rng).rounded(),
                y: Double.random(in: 25...(size.height - 25), using: &rng).rounded())
            add(letters.randomElement(using: &rng)!, center, .magnetDefault)
        }
        return Board(
            name: "words", size: size, magnets: magnets, zones: [], boundaries: [], tray: [], topZ: magnets.count)
    }

    // MARK: - The reference

    /// SPEC §10 read literally, over all pairs: every magnet's next and previous from every other.
    ///
    /// - Complexity: O(n²).
    static func allPairs(_ magnets: [Magnet]) -> [Word] {
        let n = magnets.count
        let xs = magnets.map(\.center.x)
        let ys = magnets.map(\.center.y)
        let ws = magnets.map(\.size.width)
        let hs = magnets.map(\.size.height)
        let ids = magnets.map(\.id)
        let tolerance = Geometry.tolerance
        /// a → b: `0 < b.x − a.x ≤ (a.w + b.w)/2 + min(a.w, b.w)/2`, `|b.y − a.y| ≤ min(a.h, b.h)/2`
        /// (distances within the tolerance count as zero, as in the rules).
        func follows(_ a: Int, _ b: Int) -> Bool {
            let dx = xs[b] - xs[a]
            return dx > tolerance && dx <= (ws[a] + ws[b]) / 2 + min(ws[a], ws[b]) / 2 + tolerance
                && abs(ys[b] - ys[a]) <= min(hs[a], hs[b]) / 2 + tolerance
        }
        /// Seen from `a`: is `b` a better choice than `c`? Distance along x, then |dy|, then id.
        func better(_ b: Int, _ c: Int, from a: Int) -> Bool {
            let db = abs(xs[b] - xs[a])
            let dc = abs(xs[c] - xs[a])
            if db != dc { return db < dc }
            let eb = abs(ys[b] - ys[a])
            let ec = abs(ys[c] - ys[a])
            if eb != ec { return eb < ec }
            return ids[b] < ids[c]
        }
        var next = [Int?](repeating: nil, count: n)
        var previous = next
        for a in 0..<n {
            for b in 0..<n where follows(a, b) {
                if next[a].map({ better(b, $0, from: a) }) ?? true { next[a] = b }
                if previous[b].map({ better(a, $0, from: b) }) ?? true { previous[b] = a }
            }
        }
        return Word.chains(magnets, next: next, previous: previous)
    }
}
