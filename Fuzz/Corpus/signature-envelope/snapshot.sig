{
  "signature": "/2hJa7LjSJu9Ji2Dn0PPLkIU7SeSw1ydQvwNCl8ah4LanoUY4Xs3mFwQZzgO1zqkzOQmW+FzIILUuhFvcTsYAQ==",
  "intermediate": "CVFVZ2/TcwWfotkzCHscf4ZTR4zGJmXGlfm1U4q1eIAAAAGphASuAPWXw5+sBaIrWlAfxckaBTpXgn11ITJcB4V+HECcAup42KY1ghaVLLxa/p7rOeHLDpe3j8rwSAEszhJLu5HoTQQ=",
  "nonce": "",
  "scopeHash": "ntij81SMCplZWI9h9t9kVqUqDfjfk9U7QAKq925A/Xo="
}
