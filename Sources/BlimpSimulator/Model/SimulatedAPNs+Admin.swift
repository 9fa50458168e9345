import BlimpCore
@preconcurrency import Crypto
import Foundation

// MARK: - Trusted keys

extension SimulatedAPNs {
    /// Trusts provider tokens with `kid` `keyID` and `iss` `teamID` signed by `publicKey`'s private key, replacing any
    /// key with that id. Takes effect while running; a connection keeps a token it already verified.
    public func trust(keyID: String, teamID: String, publicKey: P256.Signing.PublicKey) {
        self.verifier.trust(keyID: keyID, teamID: teamID, publicKey: publicKey)
    }

    /// Trusts tokens signed with the `.p8` key `p8` (Apple's `AuthKey_<KEYID>.p8` text).
    ///
    /// - Throws: ``APNsSigningKeyError`` when the text or the ids are not what Apple issues.
    public func trust(keyID: String, teamID: String, p8: String) throws(APNsSigningKeyError) {
        self.trust(try APNsSigningKey(pem: p8, keyID: keyID, teamID: teamID))
    }

    /// Trusts tokens signed with `key`.
    public func trust(_ key: APNsSigningKey) {
        self.trust(keyID: key.keyID, teamID: key.teamID, publicKey: key.privateKey.publicKey)
    }

    /// The trusted key ids, with the team id each speaks for.
    public var trustedKeys: [String: String] { self.verifier.trustedKeys }
}

// MARK: - Devices

extension SimulatedAPNs {
    /// Sets whether pushes to `token` are accepted; an unregistered or expired token's 410 carries the time of this
    /// call. Takes effect for the next request.
    public func setState(_ state: DeviceTokenState, for token: DeviceToken) {
        let now = self.now().timeIntervalSince1970
        self.registry.withLock {
            $0.withRecord(for: token.hex) {
                $0.state = state
                $0.stateChangedAt = now
            }
        }
    }

    /// Gives `token` the larger priority-10 budget of `NSSupportsLiveActivitiesFrequentUpdates`, or takes it away
    /// (docs/references.md#priority-budget).
    public func setFrequentUpdates(_ enabled: Bool, for token: DeviceToken) {
        self.registry.withLock { $0.withRecord(for: token.hex) { $0.frequentUpdates = enabled } }
    }

    /// What the simulator knows about `token` (hex in either case); an unknown token is active with no deliveries.
    public func device(_ token: String) -> SimulatedDevice {
        let token = token.lowercased()
        let now = self.now().timeIntervalSince1970
        let record = self.registry.withLock { $0.devices[token] } ?? DeviceRecord()
        return SimulatedDevice(token: token, record: record, now: now)
    }

    /// The most recent pushes accepted for `token` (hex in either case), newest last.
    public func deliveries(to token: String) -> [SimulatedDelivery] {
        self.registry.withLock { $0.devices[token.lowercased()]?.deliveries ?? [] }
    }
}

// MARK: - Faults, counters, reset

extension SimulatorFaults {
    /// The faults with tokens in lower case, as requests name them.
    fileprivate var normalized: Self {
        var faults = self
        faults.tooManyRequestsTokens = Set(self.tooManyRequestsTokens.map { $0.lowercased() })
        return faults
    }
}

extension SimulatedAPNs {
    /// The faults answered now.
    public var faults: SimulatorFaults {
        self.registry.withLock { $0.faults }
    }

    /// Replaces the faults; takes effect for the next request.
    public func setFaults(_ faults: SimulatorFaults) {
        let faults = faults.normalized
        self.registry.withLock { $0.faults = faults }
    }

    /// Totals since start or the last ``reset()``.
    public func counters() -> SimulatorCounters {
        self.registry.withLock { $0.counters }
    }

    /// Forgets every device (its state, activity, budget and deliveries), the counters and the faults. Trusted keys,
    /// the configuration and connections' tokens stay.
    public func reset() {
        self.registry.withLock { $0.reset() }
    }
}

// MARK: - Broadcast channels

extension SimulatedAPNs {
    /// Every broadcast channel, oldest first, with its storage policy, subscribers and publishes.
    public func channels() -> [SimulatedChannel] {
        self.registry.withLock { registry in
            registry.channels.inOrder.map { SimulatedChannel(id: $0.key, channel: $0.value) }
        }
    }
}
