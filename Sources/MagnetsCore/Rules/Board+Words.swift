// SPEC §10 — words: letters placed side by side.

/// A word on the board (SPEC §10): a chain of two or more linked magnets, read left to right.
///
/// ```swift
/// for word in board.words { print(word.text, word.magnets, word.x, word.y) } // HI [alice-3, alice-4] 100 200
/// ```
public struct Word: Hashable, Codable, Sendable {
    /// The letters of its magnets, left to right (`HELLO`).
    public var text: String
    /// Its magnets, left to right.
    public var magnets: [MagnetID]
    /// The first magnet's center.
    public var x: Double
    public var y: Double

    public init(text: String, magnets: [MagnetID], x: Double, y: Double) {
        self.text = text
        self.magnets = magnets
        self.x = x
        self.y = y
    }
}

extension Board {
    /// The words on the board (SPEC §10), ordered by their first magnet's (y, x), then its id.
    ///
    /// - Complexity: O(n log n + k) for n magnets, where k is the number of (magnet, candidate)
    ///   pairs that lie within one magnet's reach: a sort and a sweep, never all pairs.
    public var words: [Word] { Word.find(in: Array(magnets.values)) }
}

// MARK: - The rules of §10

extension Word {
    /// `true` when `a` → `b`: b's center lies to the right of a's,
    /// `0 < b.x − a.x ≤ (a.w + b.w)/2 + min(a.w, b.w)/2`, and level, `|b.y − a.y| ≤ min(a.h, b.h)/2`.
    ///
    /// Distances within ``Geometry/tolerance`` count as zero (as everywhere in the rules): a
    /// magnet 1e-6 to the right of another is not to its right, and a gap or a height difference
    /// that exceeds its limit by at most 1e-6 is at the limit.
    ///
    /// ```swift
    /// // Two 40 × 50 magnets: followers up to 60 points to the right, 25 up or down.
    /// Word.follows(a, b) // a at (100, 100), b at (160, 125): true
    /// ```
    public static func follows(_ a: Magnet, _ b: Magnet) -> Bool {
        follows(
            ax: a.center.x, ay: a.center.y, aw: a.size.width, ah: a.size.height,
            bx: b.center.x, by: b.center.y, bw: b.size.width, bh: b.size.height)
    }

    @inline(__always)
    static func follows(
        ax: Double, ay: Double, aw: Double, ah: Double,
        bx: Double, by: Double, bw: Double, bh: Double
    ) -> Bool {
        let dx = bx - ax
        guard dx > Geometry.tolerance else { return false }
        let narrower = aw < bw ? aw : bw
        let shorter = ah < bh ? ah : bh
        return dx <= (aw + bw) / 2 + narrower / 2 + Geometry.tolerance
            && abs(by - ay) <= shorter / 2 + Geometry.tolerance
    }

    /// `true` when, seen from `a`, `b` is a better choice than `c` (both follow `a`, or `a`
    /// follows both): the smaller horizontal distance, then the smaller `|dy|`, then the first by
    /// (replica, seq). Distances compare exactly, so the order is total and the same everywhere.
    public static func isCloser(_ b: Magnet, than c: Magnet, to a: Magnet) -> Bool {
        isCloser(
            bx: b.center.x, by: b.center.y, b: b.id, than: c.center.x, c.center.y, c.id,
            to: a.center.x, a.center.y)
    }

    @inline(__always)
    static func isCloser(
        bx: Double, by: Double, b: MagnetID, than cx: Double, _ cy: Double, _ c: MagnetID,
        to ax: Double, _ ay: Double
    ) -> Bool {
        let db = abs(bx - ax)
        let dc = abs(cx - ax)
        if db != dc { return db < dc }
        let eb = abs(by - ay)
        let ec = abs(cy - ay)
        if eb != ec { return eb < ec }
        return b < c
    }

    /// The words made by each magnet's choices: `next[i]` and `previous[i]` are indices into
    /// `magnets` (or `nil`). Two magnets are linked when each is the other's choice; a word is a
    /// chain of two or more linked magnets, read left to right. Ordered by the first magnet's
    /// (y, x), then its id.
    ///
    /// - Complexity: O(n + w log w) for n magnets and w words.
    public static func chains(_ magnets: [Magnet], next: [Int?], previous: [Int?]) -> [Word] {
        precondition(next.count == magnets.count && previous.count == magnets.count)
        // linked[i]: the magnet i is linked to on its right.
        var linked = [Int?](repeating: nil, count: magnets.count)
        var hasLeft = [Bool](repeating: false, count: magnets.count)
        for i in magnets.indices {
            if let j = next[i], previous[j] == i {
                linked[i] = j
                hasLeft[j] = true
            }
        }
        var words: [Word] = []
        for i in magnets.indices where linked[i] != nil && !hasLeft[i] {
            var text = magnets[i].letter
            var ids = [magnets[i].id]
            var k = i
            // x grows strictly along a chain, so it ends.
            while let j = linked[k] {
                text += magnets[j].letter
                ids.append(magnets[j].id)
                k = j
            }
            words.append(Word(text: text, magnets: ids, x: magnets[i].center.x, y: magnets[i].center.y))
        }
        words.sort { a, b in
            if a.y != b.y { return a.y < b.y }
            if a.x != b.x { return a.x < b.x }
            return a.magnets[0] < b.magnets[0]
        }
        return words
    }

    /// The words among `magnets` (in any order), found by a sort and a sweep.
    ///
    /// The magnets are sorted into horizontal bands (as tall as the median magnet) and by x
    /// within a band. A magnet's followers lie in the bands its height spans, in an x-window no
    /// wider than its largest possible gap to a magnet of that band: each is found by a binary
    /// search and a scan of that window, and every pair `a` → `b` is met exactly once, from
    /// `a`, where it updates both a's next and b's previous.
    ///
    /// - Complexity: O(n log n + k), k the (magnet, candidate) pairs within those windows: on a
    ///   board of magnets of similar sizes, a few per magnet.
    public static func find(in magnets: [Magnet]) -> [Word] {
        let n = magnets.count
        guard n >= 2 else { return [] }
        let xs = magnets.map(\.center.x)
        let ys = magnets.map(\.center.y)
        let ws = magnets.map(\.size.width)
        let hs = magnets.map(\.size.height)
        // Bands as tall as the median magnet: a magnet spans two or three of them.
        var sortedHeights = hs
        sortedHeights.sort()
        let bandHeight = Swift.max(sortedHeights[n / 2], 1e-3)
        func band(_ y: Double) -> Int {
            Int((Swift.max(-1e12, Swift.min(1e12, y)) / bandHeight).rounded(.down))
        }
        let bands = ys.map(band)
        var order = Array(0..<n)
        order.sort { a, b in
            if bands[a] != bands[b] { return bands[a] < bands[b] }
            if xs[a] != xs[b] { return xs[a] < xs[b] }
            return a < b
        }
        // Each band's stretch of `order` and its widest magnet, by band.
        var bandKeys: [Int] = []
        var bandStarts: [Int] = []
        var bandWidest: [Double] = []
        var start = 0
        while start < n {
            let b = bands[order[start]]
            var end = start
            var widest = 0.0
            while end < n, bands[order[end]] == b {
                widest = Swift.max(widest, ws[order[end]])
                end += 1
            }
            bandKeys.append(b)
            bandStarts.append(start)
            bandWidest.append(widest)
            start = end
        }
        bandStarts.append(n)
        let sortedX = order.map { xs[$0] }

        let ids = magnets.map(\.id)
        var next = [Int?](repeating: nil, count: n)
        var previous = next
        let tolerance = Geometry.tolerance
        for a in 0..<n {
            let ax = xs[a]
            let ay = ys[a]
            let aw = ws[a]
            let ah = hs[a]
            let low = band(ay - ah / 2 - tolerance)
            let high = band(ay + ah / 2 + tolerance)
            // The first band at or above `low`, then each band up to `high`.
            var first = 0
            var last = bandKeys.count
            while first < last {
                let mid = (first + last) / 2
                if bandKeys[mid] < low { first = mid + 1 } else { last = mid }
            }
            var bandIndex = first
            while bandIndex < bandKeys.count, bandKeys[bandIndex] <= high {
                let widest = bandWidest[bandIndex]
                let end = bandStarts[bandIndex + 1]
                let reach = aw / 2 + widest / 2 + Swift.min(aw, widest) / 2 + tolerance
                // The first magnet of the band strictly to the right of a (within the tolerance).
                var lo = bandStarts[bandIndex]
                var hi = end
                bandIndex += 1
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if sortedX[mid] - ax > tolerance { hi = mid } else { lo = mid + 1 }
                }
                var k = lo
                while k < end, sortedX[k] - ax <= reach {
                    let c = order[k]
                    k += 1
                    guard follows(ax: ax, ay: ay, aw: aw, ah: ah, bx: xs[c], by: ys[c], bw: ws[c], bh: hs[c]) else {
                        continue
                    }
                    if let current = next[a] {
                        if isCloser(
                            bx: xs[c], by: ys[c], b: ids[c], than: xs[current], ys[current], ids[current],
                            to: ax, ay)
                        {
                            next[a] = c
                        }
                    } else {
                        next[a] = c
                    }
                    if let current = previous[c] {
                        if isCloser(
                            bx: ax, by: ay, b: ids[a], than: xs[current], ys[current], ids[current],
                            to: xs[c], ys[c])
                        {
                            previous[c] = a
                        }
                    } else {
                        previous[c] = a
                    }
                }
            }
        }
        return chains(magnets, next: next, previous: previous)
    }
}
