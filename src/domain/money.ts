/**
 * Money travels as decimal strings with two decimals ("1890.00").
 * Arithmetic is done in minor units with BigInt so that no sum is ever rounded.
 */
const MONEY = /^(0|[1-9][0-9]*)\.([0-9]{2})$/;

export function toMinorUnits(amount: string): bigint {
  const match = MONEY.exec(amount);
  if (match === null) throw new RangeError(`not a money string: ${amount}`);
  return BigInt(match[1] as string) * 100n + BigInt(match[2] as string);
}

export function formatMinorUnits(minor: bigint): string {
  const sign = minor < 0n ? "-" : "";
  const abs = minor < 0n ? -minor : minor;
  const cents = (abs % 100n).toString().padStart(2, "0");
  return `${sign}${abs / 100n}.${cents}`;
}
