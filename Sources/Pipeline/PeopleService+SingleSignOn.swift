import FaultlineCore

extension PeopleService {
    /// Makes the account of a first single sign-on login (``SingleSignOnService``): the person, without a password (they
    /// sign in through their provider, or set one on an invite later), with `roles`; returns them as stored.
    ///
    /// Each role given is recorded in the audit trail (`member.role`, by the person).
    ///
    /// Two first logins of one person at once end with one account: ``PeopleStore/ensurePerson(login:name:owner:at:)``
    /// returns the existing row.
    public func createAccount(login: PersonLogin, name: String, roles: [(ProjectRole, ProjectID)]) async throws
        -> Person
    {
        let person = try await store.ensurePerson(login: login, name: name, owner: false, at: clock.now())
        // Each role the first login gives is recorded in its project's trail, as made by the person themselves
        // (their provider vouched for them; the address is not known here).
        let origin = AuditOrigin(actor: .person(person.id, name: person.displayName), address: nil)
        for (role, project) in roles where person.role(in: project) == nil {
            if try await store.setRole(role, person: person.id, project: project) {
                try await record(
                    .memberRole, project: project, person: person, origin, before: nil, after: role.rawValue)
            }
        }
        return try await store.person(id: person.id) ?? person
    }
}
