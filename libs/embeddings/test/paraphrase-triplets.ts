/**
 * Hand-written paraphrase triplets for a qualitative check of the offline embedders.
 * Each anchor has a paraphrase with little word overlap and a non-paraphrase that often shares words
 * with the anchor (what fools a purely lexical model). Written for this repo; not from any data set.
 */
export interface ParaphraseTriplet {
  anchor: string;
  paraphrase: string;
  nonParaphrase: string;
}

export const PARAPHRASE_TRIPLETS: ParaphraseTriplet[] = [
  { anchor: 'How do I reset my password?', paraphrase: 'I forgot my login credentials and need to change them.', nonParaphrase: 'How do I reset the router to factory settings?' },
  { anchor: 'The meeting has been moved to Thursday afternoon.', paraphrase: 'We rescheduled our get-together for Thursday after lunch.', nonParaphrase: 'The meeting notes were moved to the shared folder.' },
  { anchor: 'The car would not start this morning.', paraphrase: 'My vehicle failed to turn on today.', nonParaphrase: 'The morning show will start at nine.' },
  { anchor: 'She purchased a new laptop yesterday.', paraphrase: 'Yesterday she bought a brand new notebook computer.', nonParaphrase: 'She returned the old phone yesterday.' },
  { anchor: 'The company reported record profits this quarter.', paraphrase: 'The firm earned more money than ever in the last three months.', nonParaphrase: 'The company reported a data breach this quarter.' },
  { anchor: 'Our flight was delayed because of bad weather.', paraphrase: 'The plane left late due to a storm.', nonParaphrase: 'Our flight was cheap because we booked early.' },
  { anchor: 'The doctor prescribed antibiotics for the infection.', paraphrase: 'The physician gave her medicine to treat the bacterial illness.', nonParaphrase: 'The doctor parked his car near the hospital entrance.' },
  { anchor: 'Please send me the invoice by email.', paraphrase: 'Could you email the bill to me?', nonParaphrase: 'Please send me a postcard from Paris.' },
  { anchor: 'The server crashed after the latest update.', paraphrase: 'The machine went down once the new patch was installed.', nonParaphrase: 'The waiter was rude after the latest complaint.' },
  { anchor: 'The kids are playing football in the park.', paraphrase: 'Children are kicking a ball around outside on the grass.', nonParaphrase: 'The kids are watching a movie in the living room.' },
  { anchor: 'He is very happy with the results.', paraphrase: 'He is delighted by the outcome.', nonParaphrase: 'He is very unhappy with the service.' },
  { anchor: 'The price of gasoline increased sharply.', paraphrase: 'Fuel costs went up a lot.', nonParaphrase: 'The price of the house dropped slightly.' },
  { anchor: 'I need to cancel my subscription.', paraphrase: 'I want to stop my monthly membership.', nonParaphrase: 'I need to renew my passport.' },
  { anchor: 'The river flooded the village after heavy rain.', paraphrase: 'Torrential downpours caused the stream to overflow into the town.', nonParaphrase: 'The village held a festival by the river.' },
  { anchor: 'The application throws an error when saving files.', paraphrase: 'The program fails with an exception while writing documents to disk.', nonParaphrase: 'The application form asks for your savings account details.' },
  { anchor: 'Where is the nearest train station?', paraphrase: 'How do I get to the closest railway stop?', nonParaphrase: 'Where is the nearest coffee shop?' },
  { anchor: "The patient's blood pressure is too high.", paraphrase: 'The sick person suffers from hypertension.', nonParaphrase: "The building's water pressure is too low." },
  { anchor: 'They signed the contract on Monday.', paraphrase: 'The agreement was finalized at the start of the week.', nonParaphrase: 'They painted the fence on Monday.' },
  { anchor: 'The movie was boring and far too long.', paraphrase: 'The film was dull and lasted forever.', nonParaphrase: 'The movie was filmed in a long tunnel.' },
  { anchor: 'Increase the memory limit of the database.', paraphrase: 'Give the database server more RAM.', nonParaphrase: 'Increase the speed limit on the highway.' },
  { anchor: 'The cat is sleeping on the sofa.', paraphrase: 'A kitten is napping on the couch.', nonParaphrase: 'The dog is barking at the mailman.' },
  { anchor: 'Employees will receive a bonus at the end of the year.', paraphrase: 'Staff get extra pay in December.', nonParaphrase: 'Employees will receive new badges at the entrance.' },
  { anchor: 'The store closes at nine in the evening.', paraphrase: 'The shop shuts at 9 pm.', nonParaphrase: 'The store sells fresh fish in the morning.' },
  { anchor: 'The team won the championship last season.', paraphrase: 'The squad took the title last year.', nonParaphrase: 'The team lost the keys last night.' },
  { anchor: 'Can you translate this letter into French?', paraphrase: 'Please render this message in the French language.', nonParaphrase: 'Can you deliver this letter to the post office?' },
  { anchor: 'The bridge was closed for repairs.', paraphrase: 'Traffic could not cross the overpass during maintenance work.', nonParaphrase: 'The bank was closed for the holiday.' },
  { anchor: 'Scientists discovered a new species of frog.', paraphrase: 'Researchers found a previously unknown amphibian.', nonParaphrase: 'Scientists discovered a flaw in the old theory.' },
  { anchor: 'The stock market fell sharply today.', paraphrase: 'Share prices plunged on Wall Street this afternoon.', nonParaphrase: 'The farmers market opened today.' },
  { anchor: 'I am allergic to peanuts.', paraphrase: 'Nuts give me a bad reaction.', nonParaphrase: 'I am addicted to video games.' },
  { anchor: 'The battery drains too quickly.', paraphrase: 'The phone runs out of charge very fast.', nonParaphrase: 'The battery is made in Germany.' },
];
