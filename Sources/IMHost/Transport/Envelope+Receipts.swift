// Receipts as the wire carries them, read leniently where they only tell (what a host drew,
// its features, the lines it draws), strictly where they decide (the ids, the state).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Envelope {
    /// The `ids` member: 1 to ``receiptIDs`` global ids.
    static func ids(_ member: (String) -> JSONNode?, of what: String) throws(Refusal) -> [String] {
        guard case .array(let elements)? = member("ids")?.value, (1...receiptIDs).contains(elements.count) else {
            throw Refusal(kind: .receipt, description: "\(what) without 1 to \(receiptIDs) ids")
        }
        var ids: [String] = []
        for element in elements {
            guard case .string(let id) = element.value, GlobalID.isValid(id) else {
                throw Refusal(kind: .receipt, description: "\(what) naming an id that is not one")
            }
            ids.append(id)
        }
        return ids
    }

    static func receipt(_ member: (String) -> JSONNode?) throws(Refusal) -> Receipt {
        guard case .string(let stateText)? = member("state")?.value, let state = Receipt.State(rawValue: stateText) else {
            throw Refusal(kind: .receipt, description: "a receipt whose state is not delivered, read or refused")
        }
        let ids = try ids(member, of: "a receipt")
        var code: RefusalCode?
        if let node = member("code") {
            guard state == .refused, case .string(let text) = node.value, RefusalCode.isValid(text) else {
                throw Refusal(kind: .receipt, description: "a receipt with a code that is not a refusal's (1 to 32 of a-z 0-9 -)")
            }
            code = RefusalCode(rawValue: text)
        }
        var confirm = false
        if let node = member("confirm") {
            guard case .bool(let value) = node.value else {
                throw Refusal(kind: .receipt, description: "a receipt whose confirm is not true or false")
            }
            confirm = value
        }
        var reason: String?
        if let node = member("reason") {
            guard state == .refused, case .string(let text) = node.value else {
                throw Refusal(kind: .receipt, description: "a receipt with a reason that is not a refusal's text")
            }
            // Kept short and on one line: it is shown to the sender's user.
            reason = String(decoding: text.utf8.prefix(reasonBytes), as: UTF8.self)
        }
        let at = state == .reacted || state == .revised ? milliseconds(member("at")) : nil
        return Receipt(state: state, ids: ids, code: code, reason: reason, confirm: confirm,
                       drawn: state == .read ? drawn(member("drawn"), ids: ids) : [:], features: features(member("features")), at: at,
                       draws: state == .delivered || state == .read ? Draws.read(member("draws")) : nil)
    }

    /// A time as the wire gives it, milliseconds since 1970: a whole number from 0 to 2^53 − 1
    /// (what a JSON number holds exactly); `nil` for anything else, or nothing.
    static func milliseconds(_ node: JSONNode?) -> Int64? {
        guard case .number(let value, _)? = node?.value, value == value.rounded(), value >= 0, value <= 9_007_199_254_740_991 else { return nil }
        return Int64(value)
    }

    /// A receipt's `features`, leniently: the names that are names, at most ``Feature/most``;
    /// `nil` when it has none (a host before features), `[]` when it is not a list.
    static func features(_ node: JSONNode?) -> [String]? {
        guard let node else { return nil }
        guard case .array(let elements) = node.value else { return [] }
        return Array(elements.compactMap { element -> String? in
            if case .string(let name) = element.value, Feature.isValid(name) { return name }
            return nil
        }.prefix(Feature.most))
    }

    /// A read receipt's `drawn` member, leniently: entries for ids the receipt names, each as
    /// ``Drawn/read(_:key:)`` takes it; anything else is dropped, never refused (it only tells).
    private static func drawn(_ node: JSONNode?, ids: [String]) -> [String: Drawn] {
        guard case .object(let entries)? = node?.value else { return [:] }
        let named = Set(ids)
        var drawn: [String: Drawn] = [:]
        for entry in entries where named.contains(entry.key) && drawn[entry.key] == nil {
            if let how = Drawn.read(entry.value) { drawn[entry.key] = how }
        }
        return drawn
    }
}
