/**
 * Money travels as decimal strings with two decimals ("1890.00").
 * Arithmetic is done in minor units with BigInt so that no sum is ever rounded.
 */
const MONEY = /^(?:0|[1-9][0-9]*)\.[0-9]{2}$/;

export function toMinorUnits(amount: string): bigint {
  if (!MONEY.test(amount)) throw new RangeError(`not a money string: ${amount}`);
  // The digits without the point: "1890.00" is 189000 minor units, "0.05" is 5. No match array to collect.
  return BigInt(amount.slice(0, -3) + amount.slice(-2));
}

export function formatMinorUnits(minor: bigint): string {
  const sign = minor < 0n ? "-" : "";
  const abs = minor < 0n ? -minor : minor;
  const cents = (abs % 100n).toString().padStart(2, "0");
  return `${sign}${abs / 100n}.${cents}`;
}
