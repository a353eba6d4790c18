// rsdeep.rs — `rsdeep [SECONDS]`: a Rust program with deep stacks, built by the tests that use it
// (rustc -O -g: tests/integration/tui_deep.sh, tui_names.sh), not by make. For SECONDS (default 3)
// of wall-clock time it counts words in a HashMap<String, u64> (DefaultHasher, entry API) and
// sorts them with sort_unstable_by and a closure, 25 frames of `descend` below main:
//
//     main → rsdeep::main → descend × 25 → hash_phase → HashMap::entry, String::clone,
//         sort_unstable_by → ... (std's functions, most of them inlined: frames from DWARF)
//
// so the hottest stacks are 45 to 60 frames deep, most of them `descend` and inlined std code, and
// the names are Rust's (`<alloc::vec::Vec<T,A> as core::cmp::Ord>::cmp`). Written for Debian's
// rustc 1.63 and later.
use std::collections::HashMap;
use std::time::{Duration, Instant};

#[inline(never)]
fn hash_phase(words: &[String], counts: &mut HashMap<String, u64>) -> u64 {
    for w in words {
        *counts.entry(w.clone()).or_insert(0) += 1;
    }
    let mut v: Vec<(&String, &u64)> = counts.iter().collect();
    v.sort_unstable_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.len() as u64
}

// The volatile read after the call keeps it from being a tail call (a loop at -O).
#[inline(never)]
fn descend(depth: u32, words: &[String], counts: &mut HashMap<String, u64>) -> u64 {
    if depth == 0 {
        return hash_phase(words, counts);
    }
    let r = descend(depth - 1, words, counts);
    unsafe { std::ptr::read_volatile(&r) + 1 }
}

fn main() {
    let secs: f64 = match std::env::args().nth(1).map(|s| s.parse::<f64>()) {
        None => 3.0,
        Some(Ok(s)) if s > 0.0 && s <= 86400.0 => s,
        Some(_) => {
            eprintln!("usage: rsdeep [SECONDS]");
            std::process::exit(2);
        }
    };
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let words: Vec<String> = (0..2000u64).map(|i| format!("word{}", i * 7919 % 1000)).collect();
    let mut total = 0u64;
    while Instant::now() < until {
        let mut counts = HashMap::new();
        total = total.wrapping_add(descend(24, &words, &mut counts));
    }
    println!("{}", total);
}
