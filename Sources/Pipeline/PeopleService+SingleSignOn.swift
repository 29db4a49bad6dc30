import FaultlineCore

extension PeopleService {
    /// Makes the account of a first single sign-on login (``SingleSignOnService``): the person, without a password (they
    /// sign in through their provider, or set one on an invite later), with `roles`; returns them as stored.
    ///
    /// Two first logins of one person at once end with one account: ``PeopleStore/ensurePerson(login:name:owner:at:)``
    /// returns the existing row.
    public func createAccount(login: PersonLogin, name: String, roles: [(ProjectRole, ProjectID)]) async throws
        -> Person
    {
        let person = try await store.ensurePerson(login: login, name: name, owner: false, at: clock.now())
        for (role, project) in roles where person.role(in: project) == nil {
            _ = try await store.setRole(role, person: person.id, project: project)
        }
        return try await store.person(id: person.id) ?? person
    }
}
