/// A `simulate` script of a year of one device, for the timeline's tests and its benchmark:
/// over 5,000 events, far more than any field report.
public enum LongRunScript {
  /// 366 days of a device in the background: a refresh every 7 hours and a check between
  /// them, answers flipping `pro` between active and expired, one in ten failing.
  public static func year() -> String {
    var answers: [String] = []
    for index in 0..<1_300 {
      if index % 10 == 9 {
        answers.append("{ \"fail\": \"transient\" }")
      } else {
        let expires = (index / 40) % 2 == 0 ? "2027-06-01T00:00:00Z" : "2026-01-02T00:00:00Z"
        answers.append(
          "{ \"snapshot\": { \"entitlements\": { \"pro\": { \"status\": \"active\", "
            + "\"expiresAt\": \"\(expires)\" } } } }")
      }
    }
    var steps = ["{ \"at\": \"+0s\", \"do\": \"start\", \"in\": \"background\" }"]
    var minutes = 0
    var index = 0
    while minutes + 210 < 366 * 24 * 60 {
      minutes += 210
      index += 1
      steps.append(
        index % 2 == 0
          ? "{ \"at\": \"+\(minutes)m\", \"do\": \"refresh\" }"
          : "{ \"at\": \"+\(minutes)m\", \"do\": \"check\", \"entitlement\": \"pro\" }")
    }
    return """
      { "start": "2026-01-01T00:00:00Z", "watch": ["pro"], \(SampleScope.scriptIdentity),
        "server": { "alice": [ \(answers.joined(separator: ", ")) ] },
        "steps": [ \(steps.joined(separator: ", ")) ] }
      """
  }
}
