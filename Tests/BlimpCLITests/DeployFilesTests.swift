import BlimpTestSupport
import Foundation
import Testing

/// deploy/ against the built binary: the YAML parses, every subcommand, flag and variable the files hand `blimp` is one
/// it has, the env example names every variable it reads, the systemd units verify, autoscaled Deployments set no
/// `replicas`, and the Dockerfile's stages are a release build and an unprivileged runtime. No container engine or
/// cluster runs here, so no image is built: this is what can be checked without.
@Suite struct DeployFilesTests {
    @Test func everyYAMLFileParses() async throws {
        let files = try await DeployFiles()
        #expect(Set(files.yamlFiles).isSuperset(of: ["compose.yaml", "kubernetes/kustomization.yaml", "prometheus.yml"]))
        #expect(files.yamlErrors.isEmpty, "\(files.yamlErrors)")
    }

    /// Compose's Prometheus configuration, as Prometheus's own checker reads it.
    @Test func prometheusAcceptsItsConfiguration() async throws {
        let check = try await ChildProcess.run("/usr/bin/promtool", ["check", "config", DeployFiles.folder.appendingPathComponent("prometheus.yml").path])
        #expect(check.status == 0, "\(check.output)")
    }

    @Test func everySubcommandAndFlagIsOneTheBinaryHas() async throws {
        let files = try await DeployFiles()
        // Each kind of file was read: a parser that found nothing would pass anything.
        let read = Set(files.invocations.map(\.file))
        #expect(
            read.isSuperset(of: [
                "Dockerfile", "compose.yaml", "kubernetes/api-deployment.yaml", "kubernetes/worker-deployment.yaml",
                "kubernetes/migrate-job.yaml", "systemd/blimp-api.service", "systemd/blimp-worker@.service", "systemd/blimp-migrate.service",
            ]),
            "\(read.sorted())")
        let problems = try await Self.unknownArguments(in: files)
        #expect(problems == [])
    }

    /// The check above fails when a file names a flag or a subcommand the binary does not have.
    @Test func aFlagOrSubcommandTheBinaryLacksIsFound() async throws {
        try await withTemporaryFolder { folder in
            let copy = folder.appendingPathComponent("deploy")
            try FileManager.default.copyItem(at: DeployFiles.folder, to: copy)
            try Self.edit(copy.appendingPathComponent("kubernetes/worker-deployment.yaml"), "\"--lease-seconds\"", "\"--lease-secs\"")
            try Self.edit(copy.appendingPathComponent("systemd/blimp-migrate.service"), "blimp migrate", "blimp migrations")
            let problems = try await Self.unknownArguments(in: try await DeployFiles(folder: copy))
            #expect(problems == [
                "kubernetes/worker-deployment.yaml: blimp worker has no --lease-secs",
                "systemd/blimp-migrate.service: blimp has no subcommand migrations",
            ])
        }
    }

    @Test func everyVariableIsOneTheBinaryReadsAndTheExampleNamesThemAll() async throws {
        let files = try await DeployFiles()
        let read = try BlimpSurface.variablesRead()
        #expect(read.isSuperset(of: ["DATABASE_URL", "BLIMP_SECRET_KEY", "LOG_LEVEL", "BLIMP_PUSH_RATE_LIMIT"]), "\(read.sorted())")
        let unknown = files.variables.filter { !read.contains($0.name) }.map { "\($0.file): \($0.name)" }
        #expect(unknown == [], "variables blimp does not read")
        #expect(read.subtracting(files.exampleVariables).sorted() == [], "variables blimp reads that blimp.env.example lacks")
        #expect(files.exampleVariables.subtracting(read).sorted() == [], "variables in blimp.env.example blimp does not read")
    }

    /// A worker stopped with SIGTERM finishes its batches in flight: every file gives it longer than its lease before
    /// the kill.
    @Test func workersAreGivenLongerThanTheirLeaseToStop() async throws {
        let files = try await DeployFiles()
        let help = try await BlimpProcess.run(["worker", "--help"]).stdout
        // The option's own lines (the usage line names it too), whose default may wrap.
        let defaultLease = try #require(help.firstMatch(of: /\n {2}--lease-seconds <lease-seconds>[^(]*\(default:\s+(\d+)\)/).map { Int($0.1)! })
        #expect(defaultLease == 30, "deploy/ chose its grace periods against a 30 s lease")
        let workers = files.invocations.filter { $0.subcommand == ["worker"] }
        #expect(workers.count >= 3)
        for worker in workers {
            let lease = worker.arguments.firstIndex(of: "--lease-seconds").map { Int(worker.arguments[$0 + 1])! } ?? defaultLease
            #expect(worker.stopTimeout > lease, "\(worker.file): \(worker.stopTimeout) s to stop, a \(lease) s lease")
        }
    }

    /// A Deployment that an autoscaler scales leaves `replicas` out: every `kubectl apply` would reset the autoscaler's
    /// count to it.
    @Test func deploymentsWithAnAutoscalerLeaveTheirReplicasToIt() async throws {
        let files = try await DeployFiles()
        #expect(files.autoscaledDeployments == ["blimp-api", "blimp-worker"])
        for name in files.autoscaledDeployments.sorted() {
            let deployment = try #require(files.deployments[name], "the autoscaler's target \(name) is no Deployment in deploy/")
            #expect(deployment.replicas == nil, "\(deployment.file) sets replicas: \(deployment.replicas ?? 0)")
        }
    }

    /// `systemd-analyze verify` on the units, their binary pointed at the built one (verify checks it is executable),
    /// and `security` holding their sandbox to an exposure of 2.0 or less ("OK").
    @Test func theSystemdUnitsVerify() async throws {
        try await withTemporaryFolder { folder in
            let units = folder.appendingPathComponent("systemd")
            try FileManager.default.copyItem(at: DeployFiles.folder.appendingPathComponent("systemd"), to: units)
            let names = try FileManager.default.contentsOfDirectory(atPath: units.path).filter { $0.hasSuffix(".service") }.sorted()
            for name in names {
                try Self.edit(units.appendingPathComponent(name), "/usr/local/bin/blimp", BlimpProcess.executable.path)
            }
            #expect(names.count == 3, "\(names)")
            let paths = names.map { units.appendingPathComponent($0.replacingOccurrences(of: "@.service", with: "@9091.service")).path }
            let verify = try await ChildProcess.run("/usr/bin/systemd-analyze", ["verify"] + paths)
            #expect(verify.status == 0 && verify.output.isEmpty, "\(verify.output)")
            let security = try await ChildProcess.run("/usr/bin/systemd-analyze", ["security", "--offline=yes", "--threshold=20"] + paths)
            #expect(security.status == 0, "\(security.output)")
        }
    }

    /// What the Dockerfile says, read without a container engine (none runs where the suite does): a release build of
    /// `blimp` in one stage, copied into a runtime stage that has jemalloc and runs it as a user other than root.
    @Test func theDockerfileHasAReleaseBuildStageAndAnUnprivilegedRuntimeStage() async throws {
        let instructions = DeployFiles.dockerInstructions(try await DeployFiles().dockerfile)
        let stages = instructions.split(omittingEmptySubsequences: false) { $0.hasPrefix("FROM ") }.dropFirst()
        #expect(stages.count == 2, "a build stage and a runtime stage")
        let build = try #require(instructions.first { $0.contains("swift build") })
        for part in ["-c release", "--product blimp", "--static-swift-stdlib"] { #expect(build.contains(part), "\(build)") }
        let runtime = Array(stages.last ?? [])
        let user = try #require(runtime.last { $0.hasPrefix("USER ") }, "the runtime stage sets a USER")
        let name = user.dropFirst(5).split(separator: ":")[0]
        #expect(name != "root" && name != "0", "\(user)")
        #expect(runtime.contains(#"ENTRYPOINT ["blimp"]"#))
        #expect(runtime.contains { $0.hasPrefix("COPY --from=") && $0.hasSuffix("/usr/local/bin/blimp") })
        // blimp is linked with jemalloc: built against it, and loading it at run time.
        #expect(instructions.contains { $0.hasPrefix("RUN ") && $0.contains("libjemalloc-dev") })
        #expect(runtime.contains { $0.hasPrefix("RUN ") && $0.contains("libjemalloc2") })
    }

    // MARK: Helpers

    /// Each subcommand the files name that `blimp` lacks, and each flag its subcommand lacks, as `file: problem`.
    private static func unknownArguments(in files: DeployFiles) async throws -> [String] {
        let surface = BlimpSurface()
        var problems: [String] = []
        for invocation in files.invocations {
            let subcommand = invocation.subcommand.joined(separator: " ")
            guard let flags = try await surface.flags(of: invocation.subcommand) else {
                problems.append("\(invocation.file): blimp has no subcommand \(subcommand)")
                continue
            }
            for flag in invocation.flags where !flags.contains(flag) {
                problems.append("\(invocation.file): blimp \(subcommand) has no \(flag)")
            }
        }
        return problems.sorted()
    }

    /// Replaces `text` in `file`, which must contain it.
    private static func edit(_ file: URL, _ text: String, _ replacement: String) throws {
        let content = try String(contentsOf: file, encoding: .utf8)
        #expect(content.contains(text), "\(file.lastPathComponent) lacks \(text)")
        try content.replacingOccurrences(of: text, with: replacement).write(to: file, atomically: true, encoding: .utf8)
    }
}
