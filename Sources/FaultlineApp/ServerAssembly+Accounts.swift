import Dashboard
import FaultlineHTTP
import Pipeline

extension ServerAssembly {
    /// The account page and personal tokens (issue #37): the page is rendered by `renderer`, or a plain note when the
    /// dashboard templates are not available.
    static func accountPages(_ data: Composition, renderer: SiteRenderer?) -> AccountPages {
        AccountPages(
            accounts: data.accounts, projects: data.projects, clock: data.clock,
            render: { overview in
                (try? renderer?.accountPage(overview, maxDays: AccountService.maxDays))
                    ?? LoginFallback.html(error: "The account page needs the dashboard templates.", next: "/account")
            },
            codePage: { error, next in
                (try? renderer?.loginCodePage(error: error, next: next)) ?? LoginFallback.code(error: error, next: next)
            }, mail: data.alertMail)
    }
}

extension LoginFallback {
    /// The code step of a login without templates.
    static func code(error: String?, next: String) -> String {
        let esc = Markup.escape
        return """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Two-step sign-in · Faultline</title></head>
            <body><main><h1>Two-step sign-in</h1>\(error.map { "<p role=\"alert\">\(esc($0))</p>" } ?? "")
            <form method="post" action="/login"><label for="code">Code</label>
            <input id="code" name="code" type="text" autocomplete="one-time-code" required>
            <input type="hidden" name="next" value="\(esc(next))"><button type="submit">Sign in</button></form></main></body></html>
            """
    }
}
