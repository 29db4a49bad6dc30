import ArgumentParser
import FaultlineApp
import FaultlineCore

extension Users {
    /// `faultline users reset-totp LOGIN`: for a person who lost their phone and their recovery codes.
    struct ResetTOTP: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-totp",
            abstract: "Turn off a person's two-step sign-in (TOTP) and delete their recovery codes.",
            discussion: """
                For a person who lost their authenticator and their recovery codes: they sign in with their password \
                alone until they set up two-step sign-in again on their account page.
                """)
        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "The person's login.")
        var login: String

        func validate() throws { _ = try Users.login(login) }

        func run() async throws {
            try await dataOptions.withComposition(announcing: true) { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            let person = try await Users.person(login, root)
            let removed = try await root.accounts.resetSecondFactor(person: person.id)
            print("\(person.login): two-step sign-in \(removed ? "turned off" : "was not on")")
        }
    }
}
