import FaultlineCore

extension AppRequestContext {
    /// Who this request acts for and from where, as the audit trail records a change it makes (``AuditEntry``): the
    /// dashboard's requester (a person, the admin token) or the API's principal (the admin token, a project's upload
    /// token), with the peer's address. Nil for a request that may change nothing (a public dashboard, an ingest key).
    public var auditOrigin: AuditOrigin? {
        let actor: AuditActor?
        if let requester {
            actor = AuditActor(requester)
        } else {
            switch principal {
            case .admin: actor = .adminToken
            case .upload(let project): actor = .projectToken(project.id)
            case .personal(let grant):
                // The person, and the token by the name its list shows (ids are not shown to people).
                actor = .personalToken(grant.person.id, name: grant.person.displayName, token: grant.tokenName)
            case .ingest, nil: actor = nil
            }
        }
        return actor.map { AuditOrigin(actor: $0, address: clientAddress) }
    }
}

extension AppRequestContext {
    /// ``auditOrigin`` of a request that is about to change something: 403 when it acts for nobody who may (a public
    /// dashboard), so no change goes unrecorded.
    func changeOrigin() throws -> AuditOrigin {
        guard let origin = auditOrigin else {
            throw APIError.forbidden("changes need a login session: log in at /login")
        }
        return origin
    }
}
