extension Migrator {
  /// The migrations compiled into this build from `Migrations/`.
  static let embedded = Migrator(migrations: EmbeddedMigrations.all)
}
