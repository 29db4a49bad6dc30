import FaultlineCore

extension PeopleService {
    /// The second step of a password login for a person with a TOTP factor: the ticket of the first step and a code
    /// (a TOTP code, or one of their recovery codes) from `client`; on success starts their session.
    ///
    /// A wrong code counts as a failed login of the address and of the account (``FailureLimit``), like a wrong
    /// password, and both limits are checked first: guessing codes is as slow as guessing passwords. A ticket expires
    /// after ``AccountService/ticketLifetime`` and ends after ``AccountService/ticketAttempts`` wrong codes.
    public func loginSecondStep(ticket: String, code: String, client: String, secondFactor: AccountService)
        async throws -> AdminSessionService.LoginOutcome
    {
        guard let waiting = try await secondFactor.waitingLogin(ticket) else { return .refused }
        guard let person = try await store.person(id: waiting) else { return .refused }
        let key = person.login.rawValue
        let waits = [sessions.throttled(client), accountFailures.retryAfter(key, now: clock.now())].compactMap { $0 }
        if let wait = waits.max() { return .throttled(retryAfter: wait) }
        guard try await secondFactor.verifyLoginCode(ticket: ticket, code: code) == person.id else {
            sessions.recordFailure(client)
            accountFailures.record(key, now: clock.now())
            return .refused
        }
        accountFailures.clear(key)
        return try await startSession(for: person)
    }
}
