// The browser module of coin flips, the system that lives only in the tests (coin_flips.py): what
// a system's module declares to the core (static/tabletop/seam.js), the same rule of the room
// reducer as CoinTable.fold, the caption of its die and the tone of its flag.
export const table = {
  fold(state, event) {
    const data = event.data || {};
    if (event.kind === "pool" && data.action === "flip") return {...state, streak: data.streak};
    return state;
  },
  roles: {coin: ["coin", "the coin"]},
  tones: {"called-right": "good"},
};
