import BlimpTestSupport
import BlimpStore
import PostgresNIO

/// What keeps the schema ready to be distributed by `app_id` (Citus, docs/scaling.md): every tenant table has a
/// `NOT NULL app_id` leading its primary key, and every foreign key between tenant tables pairs `app_id` with
/// `app_id`, so that a row and the rows it refers to live on the same shard. Read from the catalog of a migrated
/// database; each function returns one line per break of its rule.
enum TenantKeys {
    /// The deployment's tables, which belong to no app (reference or coordinator-local tables under Citus): apps
    /// themselves, the schema's versions, console sessions (found by their token; the deployment admin's has no app),
    /// the deployment's leases and secrets, the time zone names PostgreSQL knows, the audit trail (whose
    /// deployment-level entries have no app), console accounts (a person may hold roles in several apps;
    /// `account_roles` is the tenant table), and the rate limits' buckets (a sign-in's address or email has no app).
    static let deploymentTables = [
        "apps", "schema_migrations", "console_sessions", "deployment_leases", "deployment_secrets", "time_zones", "audit_events",
        "accounts", "rate_buckets",
    ]

    /// Tables of any kind (the deployment's, partitions) without a primary key: every table has one (Citus moves
    /// shards by logical replication, which needs a replica identity to carry updates and deletes).
    static func tablesWithoutPrimaryKey(on client: Database) async throws -> [String] {
        let rows = try await client.query(
            """
            SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
            WHERE c.relkind IN ('r', 'p') AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conrelid = c.oid AND k.contype = 'p')
            ORDER BY 1
            """,
            logger: TestDatabase.logger)
        var tables: [String] = []
        for try await table in rows.decode(String.self) { tables.append(table) }
        return tables
    }

    /// Tenant tables whose `app_id` is missing or nullable, or does not lead their primary key.
    static func keyViolations(on client: Database) async throws -> [String] {
        let rows = try await client.query(
            """
            SELECT c.relname::text,
                   (SELECT a.attname::text FROM pg_constraint k
                    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
                    WHERE k.conrelid = c.oid AND k.contype = 'p'),
                   coalesce((SELECT a.attnotnull FROM pg_attribute a
                             WHERE a.attrelid = c.oid AND a.attname = 'app_id' AND NOT a.attisdropped), false)
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
            WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname::text <> ALL(\(Self.deploymentTables))
            ORDER BY 1
            """,
            logger: TestDatabase.logger)
        var violations: [String] = []
        for try await (table, firstKeyColumn, hasAppID) in rows.decode((String, String?, Bool).self) {
            if !hasAppID { violations.append("\(table) has no NOT NULL app_id") }
            switch firstKeyColumn {
            case nil: violations.append("\(table) has no primary key")
            case let column? where column != "app_id": violations.append("\(table)'s primary key leads with \(column)")
            default: break
            }
        }
        return violations
    }

    /// Foreign keys between tenant tables that do not pair `app_id` with `app_id`, and foreign keys from the
    /// deployment's tables to tenant tables (Citus refuses a reference table referring to a distributed one). Also
    /// returns how many foreign keys between tenant tables were checked.
    static func foreignKeyViolations(on client: Database) async throws -> (violations: [String], checked: Int) {
        let rows = try await client.query(
            """
            SELECT k.conname::text, f.relname::text, t.relname::text,
                   coalesce((SELECT bool_or(a.attname = 'app_id' AND r.attname = 'app_id')
                             FROM unnest(k.conkey, k.confkey) AS u (col, ref)
                             JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.col
                             JOIN pg_attribute r ON r.attrelid = k.confrelid AND r.attnum = u.ref), false)
            FROM pg_constraint k
            JOIN pg_class f ON f.oid = k.conrelid
            JOIN pg_class t ON t.oid = k.confrelid
            JOIN pg_namespace n ON n.oid = k.connamespace AND n.nspname = 'public'
            WHERE k.contype = 'f'
            ORDER BY 1
            """,
            logger: TestDatabase.logger)
        var (violations, checked) = ([String](), 0)
        for try await (name, from, to, pairsAppID) in rows.decode((String, String, String, Bool).self) {
            let (fromTenant, toTenant) = (!Self.deploymentTables.contains(from), !Self.deploymentTables.contains(to))
            guard toTenant else { continue }  // to apps: a distributed table referring to a reference table
            if !fromTenant {
                violations.append("\(name): the deployment's \(from) refers to the tenant table \(to)")
            } else {
                checked += 1
                if !pairsAppID { violations.append("\(name): \(from) → \(to) does not pair app_id with app_id") }
            }
        }
        return (violations, checked)
    }
}
