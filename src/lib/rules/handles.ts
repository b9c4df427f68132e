/**
 * Generated display handles for voters who gave no name (contract: "a generated handle").
 * Shape: "<Adjective> <Animal> <4 digits>", for example "Curious Otter 4821".
 */
import { randomInt } from "node:crypto";

const adjectives = [
  "Bright",
  "Calm",
  "Clever",
  "Curious",
  "Daring",
  "Eager",
  "Gentle",
  "Happy",
  "Keen",
  "Kind",
  "Lively",
  "Lucky",
  "Merry",
  "Nimble",
  "Patient",
  "Quick",
  "Quiet",
  "Sharp",
  "Swift",
  "Witty",
];
const animals = [
  "Badger",
  "Beaver",
  "Crane",
  "Dolphin",
  "Falcon",
  "Fox",
  "Heron",
  "Koala",
  "Lynx",
  "Marten",
  "Otter",
  "Owl",
  "Panda",
  "Puffin",
  "Raven",
  "Robin",
  "Seal",
  "Stoat",
  "Tiger",
  "Wren",
];

export function generateHandle(): string {
  const adjective = adjectives[randomInt(adjectives.length)]!;
  const animal = animals[randomInt(animals.length)]!;
  return `${adjective} ${animal} ${String(randomInt(10000)).padStart(4, "0")}`;
}
