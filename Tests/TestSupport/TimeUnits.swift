import Foundation

/// A minute, an hour and a day in seconds, so a test says `date.addingTimeInterval(2 * .day)`
/// where it means two days later.
extension TimeInterval {
  /// 60 seconds.
  public static let minute: TimeInterval = 60
  /// 3,600 seconds.
  public static let hour: TimeInterval = 60 * minute
  /// 86,400 seconds.
  public static let day: TimeInterval = 24 * hour
}

/// The same units as durations, for the manual clocks and the simulated runtime:
/// `clock.advance(by: .hour)`, `runtime.advance(by: .day * 30)`. Whole seconds, so a date
/// moved by one is the date moved by the `TimeInterval` unit, exactly.
extension Duration {
  /// 60 seconds.
  public static let minute: Duration = .seconds(Int64(TimeInterval.minute))
  /// 3,600 seconds.
  public static let hour: Duration = .seconds(Int64(TimeInterval.hour))
  /// 86,400 seconds.
  public static let day: Duration = .seconds(Int64(TimeInterval.day))
}
