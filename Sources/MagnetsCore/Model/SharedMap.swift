/// A dictionary whose copies share every part that neither has changed since the copy: a hash
/// trie (32 ways a level, entries kept in the highest node where their hash prefix is alone) of
/// value-type nodes, each copied on write by itself.
///
/// Copying a map costs O(1), like copying a `Dictionary`; but changing one entry of a copy then
/// copies only the nodes on that entry's path, O(log n), where a `Dictionary` copies all n
/// entries. That is what lets every checkpoint of a `Timeline` hold a board's changes (one per
/// subject ever changed) without a copy of its own.
///
/// ```swift
/// var a: SharedMap<String, Int> = ["x": 1]
/// var b = a          // shares a's nodes
/// b["y"] = 2         // copies the path to "y" only
/// a["y"]             // nil
/// ```
///
/// Iteration order is unspecified (it follows the keys' hashes), as a `Dictionary`'s is.
public struct SharedMap<Key: Hashable, Value> {
    struct Entry {
        var key: Key
        var value: Value
    }

    /// One level of the trie. `dataMap` has a bit for each 5-bit hash fragment held as an entry
    /// here, `nodeMap` one for each held as a child; `entries` and `children` are in bit order.
    /// Below the hash's last bits (`shift` ≥ 64) a node is a plain list of colliding entries.
    struct Node {
        var dataMap: UInt32 = 0
        var nodeMap: UInt32 = 0
        var entries: [Entry] = []
        var children: [Node] = []
    }

    var root = Node()
    /// The number of entries.
    public private(set) var count = 0

    /// An empty map.
    public init() {}

    public var isEmpty: Bool { count == 0 }

    /// The value for `key`; setting `nil` removes it.
    ///
    /// - Complexity: O(log n).
    public subscript(key: Key) -> Value? {
        get { root.value(for: key, hash: key.hashValue, shift: 0) }
        set {
            let hash = key.hashValue
            if let newValue {
                if root.insert(Entry(key: key, value: newValue), hash: hash, shift: 0) == nil { count += 1 }
            } else if root.value(for: key, hash: hash, shift: 0) != nil {
                // (Only a key held is removed: a removal walks the key's path in place, which
                // copies the nodes on it that another map shares, found or not.)
                _ = root.remove(key, hash: hash, shift: 0)
                count -= 1
            }
        }
    }

    /// The keys, in iteration order.
    public var keys: [Key] { map(\.key) }
}

// MARK: - The trie

extension SharedMap.Node {
    @inline(__always)
    static func bit(_ hash: Int, _ shift: Int) -> UInt32 {
        1 << UInt32(truncatingIfNeeded: (UInt64(bitPattern: Int64(hash)) >> UInt64(shift)) & 31)
    }

    /// The position among the set bits of `map` below `bit`.
    @inline(__always)
    static func index(_ map: UInt32, _ bit: UInt32) -> Int { (map & (bit &- 1)).nonzeroBitCount }

    var isEmpty: Bool { entries.isEmpty && children.isEmpty }

    func value(for key: Key, hash: Int, shift: Int) -> Value? {
        guard shift < 64 else { return entries.first { $0.key == key }?.value }
        let bit = Self.bit(hash, shift)
        if dataMap & bit != 0 {
            let entry = entries[Self.index(dataMap, bit)]
            return entry.key == key ? entry.value : nil
        }
        guard nodeMap & bit != 0 else { return nil }
        return children[Self.index(nodeMap, bit)].value(for: key, hash: hash, shift: shift + 5)
    }

    /// Inserts or replaces; returns the value replaced. Mutating through the arrays' in-place
    /// accessors copies a node only when another map shares it.
    mutating func insert(_ entry: SharedMap.Entry, hash: Int, shift: Int) -> Value? {
        guard shift < 64 else {
            guard let i = entries.firstIndex(where: { $0.key == entry.key }) else {
                entries.append(entry)
                return nil
            }
            defer { entries[i].value = entry.value }
            return entries[i].value
        }
        let bit = Self.bit(hash, shift)
        if dataMap & bit != 0 {
            let i = Self.index(dataMap, bit)
            if entries[i].key == entry.key {
                defer { entries[i].value = entry.value }
                return entries[i].value
            }
            // Two keys share this fragment: both go one level down.
            let other = entries.remove(at: i)
            dataMap ^= bit
            var child = SharedMap.Node()
            _ = child.insert(other, hash: other.key.hashValue, shift: shift + 5)
            _ = child.insert(entry, hash: hash, shift: shift + 5)
            children.insert(child, at: Self.index(nodeMap, bit))
            nodeMap |= bit
            return nil
        }
        if nodeMap & bit != 0 {
            return children[Self.index(nodeMap, bit)].insert(entry, hash: hash, shift: shift + 5)
        }
        entries.insert(entry, at: Self.index(dataMap, bit))
        dataMap |= bit
        return nil
    }

    /// Removes; returns the value removed. (A child left with one entry stays a child: the
    /// shape may depend on the history, never what the map holds.)
    mutating func remove(_ key: Key, hash: Int, shift: Int) -> Value? {
        guard shift < 64 else {
            guard let i = entries.firstIndex(where: { $0.key == key }) else { return nil }
            return entries.remove(at: i).value
        }
        let bit = Self.bit(hash, shift)
        if dataMap & bit != 0 {
            let i = Self.index(dataMap, bit)
            guard entries[i].key == key else { return nil }
            dataMap ^= bit
            return entries.remove(at: i).value
        }
        guard nodeMap & bit != 0 else { return nil }
        let j = Self.index(nodeMap, bit)
        let removed = children[j].remove(key, hash: hash, shift: shift + 5)
        if removed != nil, children[j].isEmpty {
            children.remove(at: j)
            nodeMap ^= bit
        }
        return removed
    }

    /// `true` when both nodes are one node, shared (then they hold the same entries).
    func isShared(with other: SharedMap.Node) -> Bool {
        dataMap == other.dataMap && nodeMap == other.nodeMap
            && entries.withUnsafeBufferPointer { a in
                other.entries.withUnsafeBufferPointer { a.baseAddress == $0.baseAddress }
            }
            && children.withUnsafeBufferPointer { a in
                other.children.withUnsafeBufferPointer { a.baseAddress == $0.baseAddress }
            }
    }
}

// MARK: - Sequence

extension SharedMap: Sequence {
    /// Walks the trie depth first: a node's entries, then its children.
    public struct Iterator: IteratorProtocol {
        var stack: [(node: Node, entry: Int, child: Int)]

        public mutating func next() -> (key: Key, value: Value)? {
            while let top = stack.last {
                if top.entry < top.node.entries.count {
                    stack[stack.count - 1].entry += 1
                    let entry = top.node.entries[top.entry]
                    return (entry.key, entry.value)
                }
                if top.child < top.node.children.count {
                    stack[stack.count - 1].child += 1
                    stack.append((top.node.children[top.child], 0, 0))
                    continue
                }
                stack.removeLast()
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(stack: [(root, 0, 0)]) }

    public var underestimatedCount: Int { count }
}

// MARK: - Comparing

extension SharedMap where Value: Equatable {
    /// Calls `body` with each key whose value differs between `old` and this map (`nil` where a
    /// map lacks the key), skipping the nodes both share.
    ///
    /// - Complexity: O(changed paths) when this map is `old` changed in place; O(n) at worst.
    public func forEachDifference(from old: SharedMap, _ body: (Key, Value?, Value?) throws -> Void) rethrows {
        try Self.differences(old.root, root, shift: 0, body)
    }

    private static func differences(
        _ old: Node, _ new: Node, shift: Int, _ body: (Key, Value?, Value?) throws -> Void
    ) rethrows {
        if old.isShared(with: new) { return }
        guard shift < 64 else { return try differences(old.all, new.all, body) }
        // Fragment by fragment: children on both sides are compared in turn, anything else by key.
        var rest = old.dataMap | old.nodeMap | new.dataMap | new.nodeMap
        while rest != 0 {
            let bit = rest & (0 &- rest)
            rest &= rest &- 1
            if old.nodeMap & bit != 0, new.nodeMap & bit != 0 {
                try differences(
                    old.children[Node.index(old.nodeMap, bit)], new.children[Node.index(new.nodeMap, bit)],
                    shift: shift + 5, body)
            } else {
                try differences(old.entries(at: bit), new.entries(at: bit), body)
            }
        }
    }

    private static func differences(
        _ old: [Entry], _ new: [Entry], _ body: (Key, Value?, Value?) throws -> Void
    ) rethrows {
        if old.count == 1, new.count == 1, old[0].key == new[0].key {
            if old[0].value != new[0].value { try body(new[0].key, old[0].value, new[0].value) }
            return
        }
        let oldValues = Dictionary(old.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        let newKeys = Set(new.map(\.key))
        for entry in new where oldValues[entry.key] != entry.value {
            try body(entry.key, oldValues[entry.key], entry.value)
        }
        for entry in old where !newKeys.contains(entry.key) { try body(entry.key, entry.value, nil) }
    }
}

extension SharedMap.Node {
    /// Every entry of this subtree.
    var all: [SharedMap.Entry] { entries + children.flatMap(\.all) }

    /// The entries under one fragment of this node's level.
    func entries(at bit: UInt32) -> [SharedMap.Entry] {
        if dataMap & bit != 0 { return [entries[Self.index(dataMap, bit)]] }
        if nodeMap & bit != 0 { return children[Self.index(nodeMap, bit)].all }
        return []
    }
}

extension SharedMap: Equatable where Value: Equatable {
    /// The same keys with the same values (whatever the shapes of the tries).
    public static func == (lhs: SharedMap, rhs: SharedMap) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.root.isShared(with: rhs.root) { return true }
        return lhs.allSatisfy { rhs[$0.key] == $0.value }
    }
}

extension SharedMap: Hashable where Value: Hashable {
    /// As `Dictionary` does: the entries' hashes combined in an order-independent way.
    public func hash(into hasher: inout Hasher) {
        var sum = 0
        for (key, value) in self {
            var one = Hasher()
            one.combine(key)
            one.combine(value)
            sum ^= one.finalize()
        }
        hasher.combine(count)
        hasher.combine(sum)
    }
}

// MARK: - Building and coding

extension SharedMap: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (Key, Value)...) {
        self.init()
        for (key, value) in elements { self[key] = value }
    }
}

extension SharedMap {
    /// The entries of a dictionary.
    public init(_ dictionary: [Key: Value]) {
        self.init()
        for (key, value) in dictionary { self[key] = value }
    }
}

extension SharedMap: Codable where Key: Codable, Value: Codable {
    /// Keys and values alternating in one list, as `Dictionary` codes a map with non-string keys.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for (key, value) in self {
            try container.encode(key)
            try container.encode(value)
        }
    }

    public init(from decoder: any Decoder) throws {
        self.init()
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd {
            let key = try container.decode(Key.self)
            self[key] = try container.decode(Value.self)
        }
    }
}

extension SharedMap: Sendable where Key: Sendable, Value: Sendable {}
extension SharedMap.Node: Sendable where Key: Sendable, Value: Sendable {}
extension SharedMap.Entry: Sendable where Key: Sendable, Value: Sendable {}
