import BlimpCore
import PostgresNIO
import ServiceLifecycle

extension Database {
    /// What the current server answered when the watch asked whether it is still the one to work with.
    enum Answer {
        /// It is.
        case fits
        /// It answered, but is read-only or a standby: not the server `target_session_attrs` asks for.
        case unfit
        /// No connection, or a connection that broke or refused the question.
        case silent
        /// No answer within the watch's patience: a loaded server, which is for the requests' deadline to judge.
        case slow
    }

    /// Asks the current server every ``interval`` whether it is still the one to work with, on a connection of the
    /// watch's own (the pool gives up on its connections only after 15 s with none open). When it is unfit, silent
    /// twice in a row, or refused a request's write as read-only, the database is down until ``find()`` finds the
    /// server to work with; requests then go to a new client to it, unless that is the server they reach already.
    func watch() async {
        var connection: PostgresConnection?
        var silences = 0
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let pool = self.current
            let answer = await self.ask(pool.endpoint, on: &connection)
            let refused = self.state.withLock { $0.refusedAsReadOnly == pool.generation }
            silences = answer == .silent ? silences + 1 : 0
            switch answer {
            case .slow: break
            case .fits where !refused: self.record(down: false)
            case .silent where silences < 2: break
            default:
                // Requests waiting for a connection to a server that went away fail now, with a 503, instead of at
                // their deadline: a new client, to the same server until another is found, takes their place.
                if answer == .silent, !self.isDown { self.dropConnections(of: pool) }
                if answer != .fits { self.record(down: true) }
                try? await connection?.close()
                connection = nil
                if let found = await self.find() {
                    // The same server, answering again after a restart, keeps its pool, which reconnects by itself;
                    // a server found read-only, or a name DNS moved away from a read-only server, needs new connections.
                    if found != pool.endpoint || answer == .unfit || refused { self.replace(self.current, with: found) }
                    self.record(down: false)
                    silences = 0
                }
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.interval) }
        }
        try? await connection?.close()
        self.opened.finish()
    }

    /// Asks `endpoint` on `connection`, opening one if there is none and dropping it when it fails or is slow.
    private func ask(_ endpoint: DatabaseURL.Endpoint, on connection: inout PostgresConnection?) async -> Answer {
        do {
            let open: PostgresConnection
            if let connection { open = connection } else { open = try await self.url.connect(to: endpoint, timeout: Self.patience, logger: self.logger) }
            connection = open
            let fits = try await withAbandoningTimeout(Self.patience) { try await self.url.fits(open, logger: self.logger) }
            return fits ? .fits : .unfit
        } catch {
            try? await connection?.close()
            connection = nil
            return error is TimeoutError ? .slow : .silent
        }
    }

    /// The first of the URL's servers that answers as the one to work with, or `nil`.
    private func find() async -> DatabaseURL.Endpoint? {
        for endpoint in self.url.endpoints {
            if case .success = await self.url.check(endpoint, patience: Self.patience, logger: self.logger) { return endpoint }
        }
        return nil
    }
}
