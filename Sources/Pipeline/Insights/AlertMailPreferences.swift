import FaultlineCore

/// People's choices of alert mail and digest per project (issue #37, docs/email.md): the one path through which the
/// account page (`/account`) and `faultline alerts mail` read and change them, so both check the same rules and record
/// a change in the audit trail the same way.
///
/// The rules:
/// - a person chooses only for a project they are a member of (a server owner: any project), and the choice is theirs
///   alone: the account page passes the signed-in person, never a person named by the form;
/// - choosing any mail needs a login that is an e-mail address (no mail could reach anyone else); turning everything
///   off is always allowed;
/// - a change is recorded as `member.mail` with what was chosen before and after; saving the same choice records
///   nothing.
///
/// Who gets an alert is then ``AlertMailStore/mailRecipients(project:kind:)``: a kind turned off here is a kind whose
/// alerts that person is not mailed.
public struct AlertMailPreferences: Sendable {
    let store: any AlertMailStore
    let audit: (any AuditTrail)?
    let clock: any WallClock

    /// - Parameters:
    ///   - store: where the choices are kept (`alert_mail_preferences`).
    ///   - audit: where changes are recorded; nil records nothing.
    public init(store: any AlertMailStore, audit: (any AuditTrail)?, clock: any WallClock) {
        self.store = store
        self.audit = audit
        self.clock = clock
    }

    /// What `person` chose for `project`: no kinds and no digest when they chose nothing.
    public func preference(of person: PersonID, in project: ProjectID) async throws -> AlertMailPreference {
        try await preferences(of: person).first { $0.project == project }
            ?? AlertMailPreference(person: person, project: project, kinds: [], digest: .none)
    }

    /// Every project `person` chose something for.
    public func preferences(of person: PersonID) async throws -> [AlertMailPreference] {
        try await store.mailPreferences(person: person)
    }

    /// Stores `preference` for `person` (its `person` must be theirs) and records the change as `origin`.
    ///
    /// - Returns: the choice as it was before.
    /// - Throws: `PeopleError` `.unknownProject` when `person` is neither a member of the project nor an owner,
    ///   `.invalidLogin` when they choose mail but their login is not an e-mail address, `.unknownPerson` when the
    ///   person or the project is gone.
    @discardableResult
    public func set(_ preference: AlertMailPreference, for person: Person, by origin: AuditOrigin) async throws
        -> AlertMailPreference
    {
        guard preference.person == person.id, person.owner || person.role(in: preference.project) != nil else {
            throw PeopleError(.unknownProject, "\(person.login) is not a member of that project")
        }
        let choosesMail = !preference.kinds.isEmpty || preference.digest != .none
        if choosesMail && MailAddress(person.login.rawValue) == nil {
            throw PeopleError(.invalidLogin, "\(person.login) is not an e-mail address: no mail can reach them")
        }
        let before = try await self.preference(of: person.id, in: preference.project)
        guard try await store.setMailPreference(preference) else {
            throw PeopleError(.unknownPerson, "the person or the project no longer exists")
        }
        if preference != before {
            try await audit?.record(
                AuditEntry(
                    project: preference.project, at: clock.now(), origin: origin, kind: .memberMail,
                    subject: person.login.rawValue, before: before.shown, after: preference.shown))
        }
        return before
    }
}
