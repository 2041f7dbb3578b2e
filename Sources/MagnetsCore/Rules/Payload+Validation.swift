// What every op must satisfy before it can reach a board.
extension Payload {
    /// Why the numbers of this payload are out of range (non-finite, too large, an empty path),
    /// or `nil`. Cheap enough to run on every op that is applied.
    public var numericProblem: String? {
        func targetProblem(_ t: Target) -> String? {
            switch t {
            case .point(let p): return Validation.pointProblem(p)
            case .path(let ps): return Validation.pathProblem(ps)
            }
        }
        switch self {
        case .createBoard(_, let size), .resize(let size):
            return Validation.boardSizeProblem(size)
        case .trayAdd(_, _, let size, let count):
            return Validation.magnetSizeProblem(size) ?? count.flatMap(Validation.countProblem)
        case .zoneAdd(let zone):
            return Validation.rectProblem(zone.rect) ?? Validation.capacityProblem(zone.capacity)
        case .boundaryAdd(let b):
            if let problem = Validation.pointProblem(b.segment.from) ?? Validation.pointProblem(b.segment.to) {
                return problem
            }
            return b.segment.hasLength ? nil : "a boundary's two ends must differ"
        case .pull(_, _, let target), .move(_, let target):
            return targetProblem(target)
        case .zoneRemove, .boundaryRemove, .returnMagnet:
            return nil
        case .undo(_, let lamport, _):
            return lamport >= 1 ? nil : "an undo's target has a Lamport number ≥ 1"
        }
    }

    /// Why this payload can never be applied (any rule of names, letters, colors or numbers), or
    /// `nil`. The store runs this on every op read from a file or bundle.
    public var problem: String? {
        if let numeric = numericProblem { return numeric }
        func letterOrColor(_ letter: String, _ color: String) -> String? {
            Validation.letterProblem(letter) ?? Validation.colorProblem(color)
        }
        switch self {
        case .createBoard(let name, _):
            return Validation.boardNameProblem(name)
        case .trayAdd(let letter, let color, _, _), .pull(let letter, let color, _):
            return letterOrColor(letter, color)
        case .zoneAdd(let zone):
            if let problem = Validation.nameProblem(zone.name, of: "zone") { return problem }
            if let accepts = zone.accepts {
                if accepts.isEmpty || accepts.count > 64 { return "a zone accepts 1…64 colors" }
                return accepts.lazy.compactMap(Validation.colorProblem).first
            }
            return nil
        case .zoneRemove(let name):
            return Validation.nameProblem(name, of: "zone")
        case .boundaryAdd(let b):
            return Validation.nameProblem(b.name, of: "boundary")
        case .boundaryRemove(let name):
            return Validation.nameProblem(name, of: "boundary")
        case .move(let m, _), .returnMagnet(let m):
            return Validation.magnetIDProblem(m)
        case .resize:
            return nil
        case .undo(let target, _, let subject):
            guard Validation.isReplicaID(target.replica), target.seq >= 1 else {
                return "'\(Validation.quoted(target.description))' is not an op id"
            }
            switch subject {
            case .magnet(let m): return Validation.magnetIDProblem(m)
            case .tile(let t): return letterOrColor(t.letter, t.color)
            case .zone(let name): return Validation.nameProblem(name, of: "zone")
            case .boundary(let name): return Validation.nameProblem(name, of: "boundary")
            case .board: return nil
            }
        }
    }
}
