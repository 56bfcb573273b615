import IMKit

/// Told when a listing's detail is opened.
protocol ListingObserver: AnyObject {
    func listingOpened(_ listing: Listing)
}

/// `house.listings`: the listings the signed-in user has seen, for the top post and the detail
/// route. Starts with the featured listings; remembers every card shown in a chat.
final class ListingService: Service {
    static let id = "house.listings"
    static let dependencies = [HostServices.transport]

    private var listings: [String: Listing] = [:]
    /// Observers of opened listings, held weakly.
    let observers = MulticastDelegate<any ListingObserver>()

    required init() {}

    func prepare(in user: UserContext) throws {
        for listing in Self.featured { remember(listing) }
    }

    func finalize() {
        listings = [:]
    }

    /// A listing the service knows.
    func listing(_ id: String) -> Listing? { listings[id] }

    /// Keeps a listing seen in a chat, so its detail opens later.
    func remember(_ listing: Listing) {
        if let id = listing.id { listings[id] = listing }
    }

    /// Opens a listing's detail and tells the observers.
    func open(_ id: String) throws -> Listing {
        guard let listing = listings[id] else {
            HouseLine.log.info("listing \(id) was asked for but is not known")
            throw ListingNotFound(id: id)
        }
        observers.notify { $0.listingOpened(listing) }
        return listing
    }

    static let featured = [
        Listing(id: "L1001", title: "阳光两居室 Sunny 2-room flat", price: 4200, area: 56, rooms: 2),
        Listing(id: "L1002", title: "望京一居 Wangjing studio", price: 3100, area: 38, rooms: 1),
    ]
}

struct ListingNotFound: Error, CustomStringConvertible {
    var id: String
    var description: String { "no listing \(id) is known; it may have been taken down" }
}
