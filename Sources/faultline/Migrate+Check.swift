import ArgumentParser
import FaultlineCore
import PostgresStorage
import SQLiteStorage

extension Migrate {
    /// `faultline migrate --check`: the upgrade plan of the database, read without changing it (`UpgradePlan`).
    func runCheck() async throws {
        let plan: UpgradePlan
        do {
            if let database {
                plan = try await PostgresUpgrade.plan(
                    url: database, password: Environment.string("FAULTLINE_DATABASE_PASSWORD"))
            } else {
                plan = try SQLiteUpgrade.plan(path: dataFolder + "/faultline.sqlite")
            }
        } catch let error as StorageError {
            Console.write("error: \(error.message)\n", fd: 2)
            throw ExitCode.failure
        }
        Console.write(plan.rendered + "\n")
    }
}
