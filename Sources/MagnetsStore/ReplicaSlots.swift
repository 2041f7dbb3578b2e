/// Numbers the replica ids met in a stream of ops 0, 1, 2, … in order of first sight. A stream
/// names few replicas, so a name is found by comparing it with those seen (replica ids are short:
/// a comparison is one or two words) rather than by hashing it; past a handful, a dictionary.
struct ReplicaSlots {
    private(set) var names: [String] = []
    private var byName: [String: Int] = [:]
    private var last = 0

    /// The slot of `name`, given one on first sight.
    mutating func slot(_ name: String) -> Int {
        if last < names.count, names[last] == name { return last }
        if names.count <= 8 {
            if let found = names.firstIndex(of: name) { last = found; return found }
        } else if let found = byName[name] {
            last = found
            return found
        }
        names.append(name)
        byName[name] = names.count - 1
        last = names.count - 1
        return last
    }
}
