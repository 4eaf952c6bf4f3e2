/// SplitMix64 (Steele, Lea and Flood, 2014): a tiny seeded generator whose sequence for a seed
/// is the same on every platform, unlike the system's, so a failing seed a test prints
/// reproduces anywhere. The one the tests, the benchmark and the kill sessions share.
public struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  /// A generator that always produces the same sequence for `seed`.
  public init(seed: UInt64) {
    state = seed
  }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }
}
