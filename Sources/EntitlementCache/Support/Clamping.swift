extension Int64 {
  /// `value`, already rounded, clamped to the `Int64` range instead of trapping; NaN counts as
  /// zero. For times and durations from injected clocks and configuration, which may be
  /// anything a `Double` holds.
  init(clamping value: Double) {
    guard !value.isNaN else {
      self = 0
      return
    }
    // 9.2e18 is just inside Int64's range, so the conversion below cannot trap.
    guard abs(value) < 9.2e18 else {
      self = value < 0 ? .min : .max
      return
    }
    self = Int64(value)
  }
}
