// Ordinary notation: no pools, resources or table rules of its own.
export function room() {
  return {};
}

export function dashboard() {
  return null;
}
